/**
 * Parquet files for the tests, written by a real writer: the Rust `parquet` crate (arrow-rs) through parquet-wasm,
 * with the compression chosen per column, so one file holds pages of several codecs.
 */
import { tableToIPC, type Table } from "apache-arrow";
import { Compression, Table as WasmTable, writeParquet, WriterPropertiesBuilder } from "parquet-wasm/node";

export { Compression };

export function parquetBytes(table: Table, compression: Record<string, Compression>, rowGroupRows = 1024 * 1024): Uint8Array {
  let properties = new WriterPropertiesBuilder().setCompression(Compression.SNAPPY).setMaxRowGroupSize(rowGroupRows);
  for (const [column, codec] of Object.entries(compression)) properties = properties.setColumnCompression(column, codec);
  return writeParquet(WasmTable.fromIPCStream(tableToIPC(table, "stream")), properties.build());
}
