/**
 * The folder boundaries of ARCHITECTURE.md, checked by `npm run lint`: the console's code never reaches server
 * code, shared code reaches nothing above it, and the server never renders React.
 */
const NODE_MODULES = "^node_modules/";
module.exports = {
  forbidden: [
    {
      name: "components-use-lib-only",
      comment: "Console components build on lib/ (the typed client, queries, shared helpers), never on routes or server code.",
      severity: "error",
      from: { path: "^components/" },
      to: { path: "^(app|server)/" },
    },
    {
      name: "lib-uses-nothing-above-it",
      comment: "lib/ is shared by the browser and the server: it imports neither.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app|server|components)/" },
    },
    {
      name: "server-never-imports-react",
      comment: "The server answers data; pages and components render it.",
      severity: "error",
      from: { path: "^server/" },
      to: { path: ["^(app|components)/", `${NODE_MODULES}(react|react-dom|@tanstack/react-query)/`] },
    },
    {
      name: "storage-is-the-bottom-layer",
      comment: "server/storage/ is the data root and its object store: it knows nothing of Lance or of the rooms built on it.",
      severity: "error",
      from: { path: "^server/storage/" },
      to: { path: "^server/(lance|catalog|tables|maintenance|auth|http|peers)/" },
    },
    {
      name: "peers-carry-calls-only",
      comment: "server/peers/ carries calls between instances of a root; what a call does is registered by the room that answers it.",
      severity: "error",
      from: { path: "^server/peers/" },
      to: { path: "^server/(storage|lance|catalog|tables|maintenance|auth|http)/" },
    },
    {
      name: "lance-builds-on-storage-only",
      comment: "server/lance/ is the engine and Lance's format over the store: it knows no catalog, table operation or request.",
      severity: "error",
      from: { path: "^server/lance/" },
      to: { path: "^server/(catalog|tables|maintenance|auth|http)/" },
    },
    {
      name: "catalog-knows-no-table-operations",
      comment: "server/catalog/ says which tables there are; what is done with a table's data (server/tables/) builds on it, never the reverse.",
      severity: "error",
      from: { path: "^server/catalog/" },
      to: { path: "^server/(tables|maintenance|auth|http)/" },
    },
    {
      name: "tables-know-no-maintenance",
      comment: "Maintenance jobs use the table operations; the operations do not start jobs.",
      severity: "error",
      from: { path: "^server/tables/" },
      to: { path: "^server/(maintenance|http)/" },
    },
    {
      name: "sql-reads-through-the-table-operations",
      comment: "server/sql/ runs a statement over tables it is handed (Tables): it reads their data and changes nothing, and knows no request.",
      severity: "error",
      from: { path: "^server/sql/" },
      to: { path: "^server/(maintenance|auth|http|peers|operations)/" },
    },
    {
      name: "only-routes-run-sql",
      comment: "SQL is a capability the routes offer; no room below them runs a statement.",
      severity: "error",
      from: { path: "^server/(storage|lance|catalog|tables|maintenance|auth|peers|operations)/" },
      to: { path: "^server/sql/" },
    },
    {
      name: "maps-read-through-the-table-operations",
      comment: "server/maps/ lays out a table it is handed (Tables) and keeps the layout in the root's records; it knows no request.",
      severity: "error",
      from: { path: "^server/maps/" },
      to: { path: "^server/(maintenance|auth|http|peers|operations|sql)/" },
    },
    {
      name: "only-routes-make-maps",
      comment: "A map is a capability the routes offer; no room below them lays one out. The maintainer only deletes the maps nobody opens (map-retention.ts).",
      severity: "error",
      from: { path: "^server/(storage|lance|catalog|tables|maintenance|auth|peers|operations|sql)/" },
      to: { path: "^server/maps/", pathNot: "^server/maps/map-retention\\.ts$" },
    },
    {
      name: "databases-is-the-composition-root",
      comment: "server/databases.ts opens a database from the rooms below it: they are handed what they need, and never reach up for it.",
      severity: "error",
      from: { path: "^server/(storage|lance|catalog|tables|auth|sql|maps)/", pathNot: "\\.test\\.ts$" },
      to: { path: "^server/databases\\.ts$" },
    },
    {
      name: "nothing-below-the-edge-knows-http",
      comment: "Only server/http/ (and the routes above it) speak HTTP; the rooms below answer values or a QuiverError.",
      severity: "error",
      from: { path: "^server/(storage|lance|catalog|tables|maintenance|auth|sql|maps)/" },
      to: { path: "^server/http/" },
    },
    {
      name: "no-circular",
      comment: "A cycle between modules makes both load-order dependent and hard to change alone.",
      severity: "error",
      from: { path: "^(app|server|lib|components)/" },
      to: { circular: true },
    },
  ],
  required: [
    {
      name: "server-modules-are-server-only",
      severity: "error",
      comment: "A server module imported by browser code must fail the build, not ship: each one imports server-only.",
      // The read cache's modules (and the option names they read) and the metrics' history also run in npm start's
      // primary process, as Node loads them, and the map's layout worker runs in a worker thread so: nothing in the
      // browser imports server/ (lib and components import lib only).
      module: {
        path: "^server/",
        pathNot:
          "((\\.test|_pb)\\.ts|^server/storage/read-cache/(disk-cache|cache-proxy|staged-manifests|azure-shared-key|aws-sigv4|read-cache|option-names)\\.ts|^server/operations/history\\.ts|^server/maps/layout-(worker|math)\\.ts)$",
      },
      to: { path: `${NODE_MODULES}server-only/` },
    },
  ],
  options: {
    doNotFollow: { path: NODE_MODULES },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "^(\\.next|scratch)/" },
  },
};
