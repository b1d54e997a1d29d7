import { expect, test } from "@playwright/test";
import { apiAs, hydrated, signInWithKey } from "./helpers";

test("sign in through the OpenID provider's login page, see the console, sign out", async ({ page }) => {
  await page.goto("/signin");
  await hydrated(page);
  await page.getByRole("button", { name: "Sign in with OpenID Connect" }).click();
  await page.locator("input[name=login]").fill("operator");
  await page.locator("input[name=password]").fill("any-password");
  await page.locator("button[type=submit]").click();
  const consent = page.getByRole("button", { name: /continue/i });
  if (await consent.isVisible().catch(() => false)) await consent.click();
  await expect(page.getByTestId("signed-in-user")).toHaveText("operator");
  await page.screenshot({ path: "test-results/signed-in-oidc.png" });
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2F$/);
});

test("a wrong access key is refused at sign-in", async ({ page }) => {
  await page.goto("/signin");
  await hydrated(page);
  await page.getByRole("textbox", { name: "Access key" }).fill("qvr_not_a_key");
  await page.getByRole("button", { name: "Sign in with access key" }).click();
  await expect(page.getByText("That access key is not valid")).toBeVisible();
});

test("create an API key, use it, revoke it", async ({ page }) => {
  await signInWithKey(page, undefined, "/keys");
  await page.getByLabel("Name", { exact: true }).fill("e2e-loader");
  await page.getByLabel("Role", { exact: true }).selectOption("editor");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-api-key").textContent())!.trim();
  expect(key).toMatch(/^qvr_[0-9a-f]{16}_/);
  await page.screenshot({ path: "test-results/keys-created.png" });

  const whoami = await apiAs(key, "/v1/whoami");
  expect(whoami.status).toBe(200);
  expect((await whoami.json()).principal.name).toBe("e2e-loader");
  const created = await apiAs(key, "/v1/namespace/e2e/create", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
  expect(created.status).toBe(403);

  const row = page.getByTestId("key-row-e2e-loader");
  await expect(row).toContainText("active");
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("key-row-e2e-loader").locator("td").nth(5)).not.toHaveText("never");
  await page.getByRole("button", { name: "Revoke e2e-loader" }).click();
  await expect(page.getByTestId("key-row-e2e-loader")).toContainText("revoked");
  expect((await apiAs(key, "/v1/whoami")).status).toBe(401);
});

test("grants and the audit log", async ({ page }) => {
  await signInWithKey(page, undefined, "/access");
  await page.getByLabel("Principal", { exact: true }).fill("ana@example.com");
  await page.getByLabel("Role", { exact: true }).selectOption("editor");
  await page.locator("#grant-scope-id").fill("sales");
  await page.getByRole("button", { name: "Add grant" }).click();
  await expect(page.getByTestId("grant-row").filter({ hasText: "ana@example.com" })).toContainText("namespace sales");
  await page.goto("/audit");
  await hydrated(page);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await page.getByLabel("Action", { exact: true }).fill("CreateGrant");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-row").first()).toContainText("CreateGrant");
  await page.screenshot({ path: "test-results/audit.png" });
  await page.goto("/access");
  await hydrated(page);
  await page.getByRole("button", { name: "Remove grant for ana@example.com" }).click();
  await expect(page.getByTestId("grant-row").filter({ hasText: "ana@example.com" })).toHaveCount(0);
});
