/** Refuses writes whose columns do not fit the table (see lib/schema-compat) before the engine sees them. */
import "server-only";
import type { Schema } from "apache-arrow";
import { fieldToJson } from "@/lib/arrow-schema";
import { writeSchemaProblem } from "@/lib/schema-compat";
import { QuiverError } from "@/server/errors";

export function checkWriteSchema(table: Schema, data: Schema, tableName: string) {
  const problem = writeSchemaProblem(table.fields.map(fieldToJson), data.fields.map(fieldToJson));
  if (problem) throw new QuiverError("TableSchemaValidationError", `the data does not fit table '${tableName}': ${problem}`);
}
