import { describe, expect, it } from "vitest";
import { uploadable, uploadReducer, type Staged, type UploadEvent } from "./upload-machine";

const csv = new File(["id,name\n1,a\n"], "rows.csv", { type: "text/csv" });
const arrow = new File([new Uint8Array(8)], "rows.arrow");
const column = (name: string, type = "int64") => ({ name, type, nullable: true });

const run = (events: UploadEvent[], start: Staged[] = []) => events.reduce(uploadReducer, start);
const added: UploadEvent = {
  type: "added",
  files: [
    { key: "c", file: csv, kind: "csv" },
    { key: "a", file: arrow, kind: "arrow" },
  ],
};
const analyzed: UploadEvent = {
  type: "analyzed",
  key: "c",
  header: ["id", "name"],
  inferred: [column("id"), column("name", "string")],
  sample: [["1", "a"]],
  columns: [column("id"), column("name", "string")],
  indexes: [0, 1],
  problems: [],
};
const converted: UploadEvent = { type: "converted", key: "c", body: new Blob(["arrow"]), rows: 1, badCount: 0, bad: [] };
const conversionStarted: UploadEvent = { type: "conversionStarted", key: "c" };
/** The events that take the CSV file to "ready". */
const toReady = [added, analyzed, conversionStarted, converted];

describe("the upload tab's state machine", () => {
  it("takes a CSV file from analysis through review and conversion to sending and done", () => {
    const phases: string[] = [];
    let files: Staged[] = [];
    const events: UploadEvent[] = [
      added,
      analyzed,
      { type: "columnTypeChosen", key: "c", index: 0, columnType: "int32" },
      conversionStarted,
      { type: "conversionProgress", key: "c", bytes: 10, rows: 1 },
      converted,
      { type: "sendStarted", key: "c" },
      { type: "sendProgress", key: "c", sent: 2, total: 5 },
      { type: "written", key: "c", result: { version: 2, num_inserted_rows: 1, context: {} } },
    ];
    const seen: Staged[] = [];
    for (const event of events) {
      files = uploadReducer(files, event);
      phases.push(files[0].phase);
      seen.push(files[0]);
    }
    expect(phases).toEqual(["analyzing", "review", "review", "preparing", "preparing", "ready", "uploading", "uploading", "done"]);
    expect(seen[2]).toMatchObject({ csv: { columns: [column("id", "int32"), column("name", "string")] } });
    expect(seen[4]).toMatchObject({ parsed: 10, rows: 1 });
    expect(seen[7]).toMatchObject({ sent: 2, total: 5 });
    expect(files[0]).toMatchObject({ csv: { columns: [column("id", "int32"), column("name", "string")] }, rows: 1, result: { version: 2 } });
    // Each phase holds what it has: no progress figures after the send, no result before it.
    expect(files[0]).not.toHaveProperty("sent");
    expect(seen[5]).not.toHaveProperty("result");
    expect(files[1].phase).toBe("analyzing");
  });

  it("inspects a Parquet file, converts it when its columns fit, and never sends one whose columns do not", () => {
    const parquet = new File([new Uint8Array(8)], "rows.parquet");
    const preview = { schema: ["id: int64"], rows: [{ id: 1 }] };
    const start = run([{ type: "added", files: [{ key: "p", file: parquet, kind: "parquet" }] }]);
    const inspected = run([{ type: "inspected", key: "p", preview, problems: [] }], start);
    expect(inspected[0]).toMatchObject({ phase: "review", preview });
    expect(uploadable(inspected[0])).toBe(false);
    const body = new Blob(["arrow"]);
    const ready = run(
      [
        { type: "conversionStarted", key: "p" },
        { type: "converted", key: "p", body, rows: 3, badCount: 0, bad: [] },
      ],
      inspected,
    );
    expect(ready[0]).toMatchObject({ phase: "ready", body, rows: 3 });
    expect(uploadable(ready[0])).toBe(true);
    const misfit = run([{ type: "inspected", key: "p", preview, problems: ["column 'x' is not in the table"] }], start);
    expect(misfit[0].phase).toBe("review");
    expect(uploadable(misfit[0])).toBe(false);
  });

  it("sends an Arrow file as it is once previewed, and holds back one whose columns do not fit", () => {
    const files = run([added, { type: "previewed", key: "a", preview: { schema: ["id: int64"], rows: [] }, problems: [] }]);
    expect(files[1]).toMatchObject({ phase: "ready", body: arrow });
    expect(uploadable(files[1])).toBe(true);
    const misfit = run([added, { type: "previewed", key: "a", preview: { schema: [], rows: [] }, problems: ["column x is not in the table"] }]);
    expect(uploadable(misfit[1])).toBe(false);
  });

  it("after a failed or cancelled send the file is ready again with the error, and a late progress report changes nothing", () => {
    const cancelled = new DOMException("the upload was cancelled", "AbortError");
    const files = run([
      ...toReady,
      { type: "sendStarted", key: "c" },
      { type: "sendFailed", key: "c", error: cancelled },
      { type: "sendProgress", key: "c", sent: 5, total: 5 },
      { type: "written", key: "c", result: { version: 9, num_inserted_rows: 1, context: {} } },
    ]);
    expect(files[0]).toMatchObject({ phase: "ready", error: cancelled, rows: 1 });
    expect(files[0]).not.toHaveProperty("result");
    expect(uploadable(files[0])).toBe(true);
  });

  it("ignores events that do not belong to a file's phase", () => {
    const before = run([added]);
    for (const event of [converted, { type: "sendStarted", key: "c" }, { type: "columnTypeChosen", key: "c", index: 0, columnType: "int8" }] as UploadEvent[]) {
      expect(uploadReducer(before, event)).toEqual(before);
    }
    const done = run([...toReady, { type: "sendStarted", key: "c" }, { type: "written", key: "c", result: { version: 2, num_inserted_rows: 1, context: {} } }]);
    expect(uploadReducer(done, { type: "sendStarted", key: "c" })[0].phase).toBe("done");
    expect(uploadReducer(done, { type: "failed", key: "c", error: new Error("late") })[0].phase).toBe("done");
  });

  it("a CSV file without rows, or with mapping problems, is not sent", () => {
    const empty = run([added, analyzed, conversionStarted, { ...converted, rows: 0 }]);
    expect(uploadable(empty[0])).toBe(false);
    const misfit = run([added, { ...analyzed, problems: ["column name is not in the table"] }]);
    expect(misfit[0].phase).toBe("review");
    expect(uploadable(misfit[0])).toBe(false);
  });
});
