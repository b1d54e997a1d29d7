import { expect, test } from "@playwright/test";
import packageJson from "../package.json";
import { signInWithKey } from "./helpers";

test("signed out, pages send you to sign-in and back to where you were going", async ({ page }) => {
  await page.goto("/docs");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fdocs$/);
  await signInWithKey(page, undefined, "/docs");
  await expect(page).toHaveURL(/\/docs$/);
  await expect(page.getByRole("heading", { name: "Quiver table catalog API" })).toBeVisible();
  await expect(page.getByText("/v1/table/{id}/merge_insert")).toBeVisible();
});

test("home page shows the service and its version", async ({ page }) => {
  await signInWithKey(page);
  await expect(page.getByTestId("version")).toHaveText(`version ${packageJson.version}`);
});

test("console pages send a nonce-based Content-Security-Policy and run nothing it blocks", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(m.text())) violations.push(m.text());
  });
  const signin = await page.goto("/signin");
  const csp = signin!.headers()["content-security-policy"];
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).not.toContain("unsafe-inline' 'strict");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(signin!.headers()["x-content-type-options"]).toBe("nosniff");
  expect(signin!.headers()["referrer-policy"]).toBe("same-origin");
  const nonce = /'nonce-([^']+)'/.exec(csp)![1];
  const scripts = [...(await signin!.text()).matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  expect(scripts.length).toBeGreaterThan(0);
  expect(scripts.filter((tag) => !tag.includes(`nonce="${nonce}"`))).toEqual([]);
  const again = await page.request.get("/signin");
  expect(again.headers()["content-security-policy"]).not.toBe(csp);
  await signInWithKey(page, undefined, "/docs");
  await expect(page.getByRole("heading", { name: "Quiver table catalog API" })).toBeVisible();
  for (const path of ["/", "/keys", "/audit"]) {
    await page.goto(path);
    await expect(page.locator("[data-hydrated=true]").first()).toBeAttached();
  }
  expect(violations).toEqual([]);
});
