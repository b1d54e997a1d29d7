import { expect, type Page } from "@playwright/test";

export const adminKey = () => process.env.E2E_ADMIN_KEY!;
export const origin = () => process.env.E2E_ORIGIN!;

/** A full-page screenshot of the page in each theme, for review: test-results/screens/<name>-<theme>.png. */
export async function shots(page: Page, name: string) {
  for (const theme of ["light", "dark"] as const) {
    await page.evaluate((t) => {
      document.documentElement.classList.remove("light", "dark", "system");
      document.documentElement.classList.add(t);
    }, theme);
    await page.screenshot({ path: `test-results/screens/${name}-${theme}.png`, fullPage: true });
  }
}

/** Waits until React has hydrated the page, so typing and clicking reach its handlers. */
export async function hydrated(page: Page) {
  await expect(page.locator("[data-hydrated=true]").first()).toBeAttached();
}

/** Signs in with an access key and lands on `path`; `at` opens the console at another address than the tests' own. */
export async function signInWithKey(page: Page, key = adminKey(), path = "/", at = "") {
  await page.goto(`${at}/signin?callbackUrl=${encodeURIComponent(path)}`);
  await hydrated(page);
  await page.getByRole("textbox", { name: "Access key" }).fill(key);
  await page.getByRole("button", { name: "Sign in with access key" }).click();
  await expect(page.getByTestId("signed-in-user")).toBeVisible();
  await hydrated(page);
}

/** Calls the API as a program would, with an API key. */
export async function apiAs(key: string, path: string, init: RequestInit = {}) {
  return fetch(origin() + path, { ...init, headers: { "x-api-key": key, ...(init.headers as Record<string, string>) } });
}
