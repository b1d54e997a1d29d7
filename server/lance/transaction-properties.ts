/**
 * A version's transaction properties (Lance's `Transaction.transaction_properties`, a string map, field 4), read from
 * and written into the transaction a manifest file holds inline (at `Manifest.transaction_section`). Lance reads a
 * version's transaction from there first (conflict checks, `Dataset::read_transaction`), so what Quiver adds travels
 * with the version in the one create-only write that makes it: which requests a commit applied is then a fact of the
 * version itself, never of a record beside it.
 *
 * Adding properties leaves every byte before the manifest message where it was: the new transaction and the manifest
 * message follow, and the footer points at the new message. The writer that staged the manifest keeps reading its
 * index section and transaction at the offsets it knows, which still hold what it wrote; every reader of the file
 * follows the footer to the new transaction.
 */
import "server-only";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

const TRANSACTION_PROPERTIES = 4;
const TRANSACTION_SECTION = 21;
const FOOTER_BYTES = 16;

/** The position of the inline transaction a manifest message names, if any (the last value wins, as in every protobuf reader). */
function transactionSection(message: Uint8Array): number | undefined {
  const reader = new BinaryReader(message);
  let section: number | undefined;
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === TRANSACTION_SECTION && wire === WireType.Varint) section = Number(reader.uint64());
    else reader.skip(wire, field);
  }
  return section;
}

function lengthPrefixed(buf: Buffer, at: number): Buffer {
  return buf.subarray(at + 4, at + 4 + buf.readUInt32LE(at));
}

/** The manifest message and its position: the file ends with that position, the format version and the magic `LANC`. */
function manifestMessage(file: Buffer): { at: number; message: Buffer } {
  if (file.length < FOOTER_BYTES || file.toString("latin1", file.length - 4) !== "LANC") throw new Error("not a Lance manifest");
  const at = Number(file.readBigInt64LE(file.length - FOOTER_BYTES));
  return { at, message: lengthPrefixed(file, at) };
}

/** The properties of the transaction a manifest file holds inline; empty when it holds none. */
export function transactionProperties(file: Buffer): Record<string, string> {
  const section = transactionSection(manifestMessage(file).message);
  if (section === undefined) return {};
  const reader = new BinaryReader(lengthPrefixed(file, section));
  const properties: Record<string, string> = {};
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field !== TRANSACTION_PROPERTIES || wire !== WireType.LengthDelimited) {
      reader.skip(wire, field);
      continue;
    }
    const entry = new BinaryReader(reader.bytes());
    let key = "";
    let value = "";
    while (entry.pos < entry.len) {
      const [part, partWire] = entry.tag();
      if (part === 1) key = entry.string();
      else if (part === 2) value = entry.string();
      else entry.skip(partWire, part);
    }
    properties[key] = value;
  }
  return properties;
}

/**
 * The manifest file with `properties` added to its inline transaction's (a protobuf map's entries merge when appended,
 * and a key given again takes the later value). A manifest without an inline transaction is refused: Lance has
 * written one into every manifest since its transactions moved inline, and a transaction file beside it would be a
 * second object to make atomic with the first.
 */
export function withTransactionProperties(file: Buffer, properties: Record<string, string>): Buffer {
  const { at, message } = manifestMessage(file);
  const section = transactionSection(message);
  if (section === undefined) throw new Error("the manifest holds no inline transaction to add properties to");
  const entries = new BinaryWriter();
  for (const [key, value] of Object.entries(properties)) {
    entries
      .tag(TRANSACTION_PROPERTIES, WireType.LengthDelimited)
      .fork()
      .tag(1, WireType.LengthDelimited)
      .string(key)
      .tag(2, WireType.LengthDelimited)
      .string(value)
      .join();
  }
  const transaction = Buffer.concat([lengthPrefixed(file, section), entries.finish()]);
  const movedMessage = Buffer.concat([message, new BinaryWriter().tag(TRANSACTION_SECTION, WireType.Varint).uint64(at).finish()]);
  const transactionAt = at;
  const messageAt = transactionAt + 4 + transaction.length;
  const out = Buffer.alloc(messageAt + 4 + movedMessage.length + FOOTER_BYTES);
  file.copy(out, 0, 0, at);
  out.writeUInt32LE(transaction.length, transactionAt);
  transaction.copy(out, transactionAt + 4);
  out.writeUInt32LE(movedMessage.length, messageAt);
  movedMessage.copy(out, messageAt + 4);
  // The footer: the manifest message's position, then the format version and magic as the writer wrote them.
  out.writeBigInt64LE(BigInt(messageAt), out.length - FOOTER_BYTES);
  file.copy(out, out.length - 8, file.length - 8);
  return out;
}
