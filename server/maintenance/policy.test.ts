import { describe, expect, it } from "vitest";
import { BUILT_IN_POLICY, cleanupDue, compactionDue, servicePolicy } from "./policy";

const health = { version: 9, rows: 90, fragments: 4, small_fragments: 4, deleted_rows: 0, data_bytes: 1, versions: 9, oldest_version_time: null };

describe("the maintenance policy", () => {
  it("reads the service's settings, and names each it cannot read", () => {
    expect(servicePolicy({}).policy).toEqual(BUILT_IN_POLICY);
    expect(servicePolicy({ QUIVER_MAINTENANCE: "off", QUIVER_MAINTENANCE_RETENTION_S: "60" }).policy).toMatchObject({ enabled: false, retentionSeconds: 60 });
    expect(
      servicePolicy({ QUIVER_MAINTENANCE: "maybe", QUIVER_MAINTENANCE_COMPACT_SMALL_FRAGMENTS: "1", QUIVER_MAINTENANCE_COMPACT_DELETED_FRACTION: "1.5" })
        .problems,
    ).toEqual([
      "QUIVER_MAINTENANCE='maybe' is not on or off",
      "QUIVER_MAINTENANCE_COMPACT_SMALL_FRAGMENTS='1' is not a whole number of at least 2",
      "QUIVER_MAINTENANCE_COMPACT_DELETED_FRACTION='1.5' is not a share of rows above 0 and at most 1",
    ]);
  });

  it("compacts at the small-fragment or deleted-row threshold, and cleans up past the retention", () => {
    const policy = { ...BUILT_IN_POLICY, compactSmallFragments: 5, compactDeletedFraction: 0.25, retentionSeconds: 60 };
    expect(compactionDue(policy, health)).toBeNull();
    expect(compactionDue(policy, { ...health, small_fragments: 5 })).toBe("5 small fragments (at 5)");
    expect(compactionDue(policy, { ...health, rows: 60, deleted_rows: 20 })).toBe("20 of 80 rows deleted (at 0.25)");
    expect(compactionDue(policy, { ...health, rows: 61, deleted_rows: 19 })).toBeNull();
    const now = Date.parse("2026-01-01T00:10:00Z");
    expect(cleanupDue(policy, { ...health, oldest_version_time: "2026-01-01T00:08:59Z" }, now)).toBe(true);
    expect(cleanupDue(policy, { ...health, oldest_version_time: "2026-01-01T00:09:30Z" }, now)).toBe(false);
    expect(cleanupDue(policy, { ...health, versions: 1, oldest_version_time: "2020-01-01T00:00:00Z" }, now)).toBe(false);
  });
});
