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
