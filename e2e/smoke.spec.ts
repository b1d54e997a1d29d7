import { expect, test } from "@playwright/test";
import packageJson from "../package.json";

test("home page shows the service, its version and a link to the API reference", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Quiver" })).toBeVisible();
  await expect(page.getByTestId("version")).toHaveText(`version ${packageJson.version}`);
  await page.getByRole("link", { name: "API reference" }).click();
  await expect(page).toHaveURL(/\/docs$/);
  await expect(page.getByRole("heading", { name: "Quiver table catalog API" })).toBeVisible();
  await expect(page.getByText("/v1/table/{id}/merge_insert")).toBeVisible();
  await page.screenshot({ path: "test-results/docs.png", fullPage: false });
});
