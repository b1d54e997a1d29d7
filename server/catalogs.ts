/** The process-wide catalog of the configured data root, initialised once. */
import { Catalog } from "./catalog";
import { config } from "./config";

let catalog: Promise<Catalog> | undefined;

export function defaultCatalog(): Promise<Catalog> {
  catalog ??= (async () => {
    const c = new Catalog(config.root);
    await c.init();
    return c;
  })();
  catalog.catch(() => (catalog = undefined));
  return catalog;
}
