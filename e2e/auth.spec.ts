import { expect, test, type Page } from "@playwright/test";
import { adminKey, apiAs, hydrated, signInWithKey } from "./helpers";
import { call, rows } from "./api";

async function signInWithOidc(page: Page, login: string, path = "/") {
  await page.goto(`/signin?callbackUrl=${encodeURIComponent(path)}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Sign in with OpenID Connect" }).click();
  await page.locator("input[name=login]").fill(login);
  await page.locator("input[name=password]").fill("any-password");
  await page.locator("button[type=submit]").click();
  const consent = page.getByRole("button", { name: /continue/i });
  if (await consent.isVisible().catch(() => false)) await consent.click();
}

test("sign in through the OpenID provider's login page, see the console, sign out", async ({ page }) => {
  await signInWithOidc(page, "operator");
  await expect(page.getByTestId("signed-in-user")).toHaveText("operator");
  await page.screenshot({ path: "test-results/signed-in-oidc.png" });
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2F$/);
});

test("with no public address configured, sign-in and sign-out stay at the address the console was opened at", async ({ page, baseURL }) => {
  // quiver.test is this machine too (playwright.config.ts maps it to loopback): a name other than the one the server was started with.
  for (const opened of [baseURL!, baseURL!.replace("127.0.0.1", "quiver.test")]) {
    await signInWithKey(page, adminKey(), "/keys", opened);
    await expect(page).toHaveURL(`${opened}/keys`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(`${opened}/signin`);
  }
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
  // Enabled only once the form holds the name: its handlers are attached by then (a click before is lost).
  await expect(page.getByRole("button", { name: "Create key" })).toBeEnabled();
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

test("the automatic policy's own compaction is in the audit log: by the policy, the versions it made, and why", async ({ page }) => {
  await call("/v1/table/tidy/declare", { json: { properties: { "quiver.maintenance": "on", "quiver.maintenance.compact_small_fragments": "2" } } });
  for (let i = 0; i < 3; i++) await call("/v1/table/tidy/insert", { body: rows(i * 10, i * 10 + 10) });
  await expect
    .poll(async () => ((await call("/v1/admin/audit?principal=quiver:policy&target=tidy")).entries as unknown[]).length, { timeout: 30_000 })
    .toBeGreaterThan(0);
  await signInWithKey(page, undefined, "/audit");
  await page.getByLabel("Principal", { exact: true }).fill("quiver:policy");
  await page.getByRole("button", { name: "Filter" }).click();
  const row = page.getByTestId("audit-row").filter({ hasText: "tidy" }).first();
  await expect(row).toContainText("service:automatic maintenance policy");
  await expect(row).toContainText("CompactTable");
  await expect(row).toContainText(/compaction made versions? \d+/);
  await expect(row).toContainText("why: 3 small fragments");
  await page.screenshot({ path: "test-results/audit-policy.png" });
});

// The test provider runs at oidc-provider's defaults: a code flow's ID token holds only `sub`, and email and groups
// come from userinfo. QUIVER_ADMINS names the group `ops` (e2e/global-setup.ts).
test("sign-in takes email and groups from userinfo: a group's member is an administrator, another group's grant applies", async ({ browser }) => {
  const ops = await browser.newPage();
  await signInWithOidc(ops, "ops-lead", "/keys");
  await expect(ops.getByTestId("signed-in-user")).toHaveText("ops-lead");
  const opsWhoami = await ops.evaluate(() => fetch("/v1/whoami").then((r) => r.json() as Promise<{ principal: { name: string }; admin: boolean }>));
  expect(opsWhoami).toMatchObject({ principal: { name: "ops-lead@example.com" }, admin: true });
  await expect(ops.getByTestId("key-row-e2e-ops")).toHaveCount(0);
  await ops.getByLabel("Name", { exact: true }).fill("e2e-ops");
  await ops.getByRole("button", { name: "Create key" }).click();
  await expect(ops.getByTestId("key-row-e2e-ops")).toContainText("active");
  await expect(ops.getByText("needs an administrator")).toHaveCount(0);
  await ops.close();

  const json = { method: "POST", headers: { "content-type": "application/json" } };
  expect((await apiAs(adminKey(), "/v1/namespace/by_group/create", { ...json, body: "{}" })).status).toBe(200);
  expect((await apiAs(adminKey(), "/v1/namespace/not_granted/create", { ...json, body: "{}" })).status).toBe(200);
  const grant = { principal: { type: "group", name: "analysts" }, role: "viewer", scope: { kind: "namespace", id: ["by_group"] } };
  expect((await apiAs(adminKey(), "/v1/admin/grants/create", { ...json, body: JSON.stringify(grant) })).status).toBe(200);
  const analyst = await browser.newPage();
  await signInWithOidc(analyst, "analyst-7");
  await expect(analyst.getByTestId("signed-in-user")).toHaveText("analyst-7");
  const whoami = await analyst.evaluate(() => fetch("/v1/whoami").then((r) => r.json() as Promise<{ principal: { name: string }; admin: boolean }>));
  expect(whoami).toMatchObject({ principal: { name: "analyst-7@example.com" }, admin: false });
  const tree = analyst.getByRole("navigation", { name: "Catalog" });
  await expect(tree.getByRole("link", { name: "by_group" })).toBeVisible();
  await expect(tree.getByRole("link", { name: "not_granted" })).toHaveCount(0);
  await analyst.goto("/keys");
  await expect(analyst.getByText("ListApiKeys needs an administrator of the whole service")).toBeVisible();
  await analyst.close();
});
