import { Binary, Float64, Int64, Table, tableFromIPC, Utf8, vectorFromArray } from "apache-arrow";
import { parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import { resultArrowFile, resultCsv, resultParquet } from "./result-export";

const table = new Table({
  id: vectorFromArray([1n, 2n, null], new Int64()),
  x: vectorFromArray([1.5, null, -2], new Float64()),
  s: vectorFromArray(["a,b", 'say "hi"', "line\nbreak"], new Utf8()),
  b: vectorFromArray([new Uint8Array([1, 2, 255]), null, new Uint8Array([])], new Binary()),
});

describe("a result as a file", () => {
  it("writes CSV with a header, quoting what needs it, nulls empty and bytes in base64", () => {
    expect(resultCsv(table)).toBe('id,x,s,b\r\n1,1.5,"a,b",AQL/\r\n2,,"say ""hi""",\r\n,-2,"line\nbreak",\r\n');
  });

  it("writes Parquet that reads back with the same values", async () => {
    const rows = await parquetReadObjects({ file: resultParquet(table), utf8: false });
    expect(rows.map((r) => [r.id, r.x, r.s])).toEqual([
      [1n, 1.5, "a,b"],
      [2n, null, 'say "hi"'],
      [null, -2, "line\nbreak"],
    ]);
    expect(Array.from(rows[0].b as Uint8Array)).toEqual([1, 2, 255]);
  });

  it("writes an Arrow IPC file of the same rows", () => {
    const back = tableFromIPC(resultArrowFile(table));
    expect(back.numRows).toBe(3);
    expect(back.getChild("s")!.toArray()).toEqual(["a,b", 'say "hi"', "line\nbreak"]);
  });
});
