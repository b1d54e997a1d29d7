/**
 * Lance field paths: nested fields are dot-separated; a segment containing a dot (or a backtick) is written in
 * backticks, with backticks inside doubled. `a.b`, `` `a.b` ``, `` `we``ird`.x ``.
 */

export class FieldPathError extends Error {}

export function parseFieldPath(path: string): string[] {
  const segments: string[] = [];
  let i = 0;
  if (path.length === 0) throw new FieldPathError("field path is empty");
  while (i <= path.length) {
    let segment = "";
    if (path[i] === "`") {
      i++;
      for (;;) {
        if (i >= path.length) throw new FieldPathError(`unterminated backtick in field path '${path}'`);
        if (path[i] === "`") {
          if (path[i + 1] === "`") {
            segment += "`";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        segment += path[i++];
      }
      if (i < path.length && path[i] !== ".") throw new FieldPathError(`unexpected character after a quoted segment in '${path}'`);
    } else {
      while (i < path.length && path[i] !== ".") {
        if (path[i] === "`") throw new FieldPathError(`a backtick may only open a segment in '${path}'`);
        segment += path[i++];
      }
    }
    if (segment.length === 0) throw new FieldPathError(`field path '${path}' has an empty segment`);
    segments.push(segment);
    if (i >= path.length) break;
    i++; // the dot
    if (i === path.length) throw new FieldPathError(`field path '${path}' ends with a dot`);
  }
  return segments;
}

export function formatFieldPath(segments: string[]): string {
  return segments.map((s) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : `\`${s.replace(/`/g, "``")}\``)).join(".");
}
