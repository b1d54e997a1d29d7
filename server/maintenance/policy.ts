/**
 * The automatic maintenance policy: when a table is compacted and how long its versions are kept. Service-wide
 * defaults come from the environment; a namespace's or table's properties override them (the table's first, then
 * its nearest namespace's). A property whose value cannot be read is reported, and the setting below it applies.
 */
import "server-only";
import type { CatalogIndex, TableEntry } from "@/server/catalog/catalog-table";
import type { TableHealth } from "./operations";
import { joinIdentifier } from "@/lib/identifiers";

export interface MaintenancePolicy {
  enabled: boolean;
  /** Compact when at least this many fragments are small. */
  compactSmallFragments: number;
  /** Compact when at least this share of the rows in data files is deleted. */
  compactDeletedFraction: number;
  /** Versions made longer ago than this go (seconds). */
  retentionSeconds: number;
}

export interface PolicySetting {
  /** What a value must be, as the refusal says it. */
  expected: string;
  property: string;
  env: string;
  read: (text: string) => boolean | number | null;
  key: keyof MaintenancePolicy;
}

const onOff = (text: string) => (/^(on|true|1)$/i.test(text.trim()) ? true : /^(off|false|0)$/i.test(text.trim()) ? false : null);
const wholeNumber = (min: number) => (text: string) => (/^\d+$/.test(text.trim()) && Number(text) >= min ? Number(text) : null);
const fraction = (text: string) => {
  const value = Number(text);
  return text.trim() !== "" && Number.isFinite(value) && value > 0 && value <= 1 ? value : null;
};

export const POLICY_SETTINGS: PolicySetting[] = [
  { expected: "on or off", property: "quiver.maintenance", env: "QUIVER_MAINTENANCE", read: onOff, key: "enabled" },
  {
    expected: "a whole number of at least 2",
    property: "quiver.maintenance.compact_small_fragments",
    env: "QUIVER_MAINTENANCE_COMPACT_SMALL_FRAGMENTS",
    read: wholeNumber(2),
    key: "compactSmallFragments",
  },
  {
    expected: "a share of rows above 0 and at most 1",
    property: "quiver.maintenance.compact_deleted_fraction",
    env: "QUIVER_MAINTENANCE_COMPACT_DELETED_FRACTION",
    read: fraction,
    key: "compactDeletedFraction",
  },
  {
    expected: "a whole number of seconds",
    property: "quiver.maintenance.retention_seconds",
    env: "QUIVER_MAINTENANCE_RETENTION_S",
    read: wholeNumber(0),
    key: "retentionSeconds",
  },
];

export const BUILT_IN_POLICY: MaintenancePolicy = { enabled: true, compactSmallFragments: 10, compactDeletedFraction: 0.1, retentionSeconds: 7 * 24 * 3600 };

/** The service-wide policy; a variable that cannot be read stops the server (config errors are found at start). */
export function servicePolicy(env: Record<string, string | undefined> = process.env): { policy: MaintenancePolicy; problems: string[] } {
  const policy = { ...BUILT_IN_POLICY };
  const problems: string[] = [];
  for (const setting of POLICY_SETTINGS) {
    const text = env[setting.env];
    if (text === undefined || text === "") continue;
    const value = setting.read(text);
    if (value === null) problems.push(`${setting.env}='${text}' is not ${setting.expected}`);
    else Object.assign(policy, { [setting.key]: value });
  }
  return { policy, problems };
}

/** The policy for one table: the service's, then its namespaces' properties from the root down, then its own. */
export function tablePolicy(service: MaintenancePolicy, index: CatalogIndex, entry: TableEntry): { policy: MaintenancePolicy; problems: string[] } {
  const policy = { ...service };
  const problems: string[] = [];
  const layers: Array<[string, Record<string, string>]> = [];
  for (let depth = 1; depth < entry.id.length; depth++) {
    const namespace = joinIdentifier(entry.id.slice(0, depth));
    layers.push([`namespace '${namespace}'`, index.namespaces.get(namespace)?.properties ?? {}]);
  }
  layers.push([`table '${entry.objectId}'`, entry.properties]);
  for (const [owner, properties] of layers) {
    for (const setting of POLICY_SETTINGS) {
      const text = properties[setting.property];
      if (text === undefined) continue;
      const value = setting.read(text);
      if (value === null) problems.push(`${owner}: ${setting.property}='${text}' is not ${setting.expected}; ignored`);
      else Object.assign(policy, { [setting.key]: value });
    }
  }
  return { policy, problems };
}

/** Whether the table's health calls for compaction under the policy, and why. */
export function compactionDue(policy: MaintenancePolicy, health: TableHealth): string | null {
  if (health.small_fragments >= policy.compactSmallFragments) return `${health.small_fragments} small fragments (at ${policy.compactSmallFragments})`;
  const physical = health.rows + health.deleted_rows;
  if (health.deleted_rows > 0 && physical > 0 && health.deleted_rows / physical >= policy.compactDeletedFraction)
    return `${health.deleted_rows} of ${physical} rows deleted (at ${policy.compactDeletedFraction})`;
  return null;
}

/** Whether the table has versions older than the retention (besides its latest). */
export function cleanupDue(policy: MaintenancePolicy, health: TableHealth, now = Date.now()): boolean {
  return health.versions > 1 && health.oldest_version_time !== null && Date.parse(health.oldest_version_time) < now - policy.retentionSeconds * 1000;
}
