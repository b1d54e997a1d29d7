"use client";
/**
 * The SQL workspace's editor (CodeMirror 6): SQL highlighting, completion of the tables the caller may read (with
 * the columns of those the text names), DuckDB's functions and keywords; Mod-Enter runs; an error the server placed
 * is underlined where it is, with its message on hover.
 */
import { useEffect, useRef } from "react";
import { autocompletion, completeFromList, type Completion } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { PostgreSQL, sql, type SQLNamespace } from "@codemirror/lang-sql";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, placeholder } from "@codemirror/view";
import { tags } from "@lezer/highlight";

export interface EditorVocabulary {
  tables: string[][];
  /** Columns by table name (its parts joined by dots), for the tables whose descriptions are on hand. */
  columns: Map<string, Array<{ name: string; type: string }>>;
  functions: Array<{ name: string; kind: string }>;
}

export interface EditorError {
  message: string;
  /** Offset in the text; the error is marked from there to the end of the word. */
  position: number;
}

const theme = EditorView.theme({
  "&": { backgroundColor: "var(--sql-bg)", color: "var(--sql-fg)", fontSize: "13px", border: "1px solid var(--sql-border)", borderRadius: "6px" },
  "&.cm-focused": { outline: "2px solid #6366f1", outlineOffset: "-1px" },
  ".cm-content": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace", caretColor: "var(--sql-fg)", minHeight: "9rem" },
  ".cm-gutters": { backgroundColor: "var(--sql-gutter)", color: "var(--sql-muted)", borderRight: "1px solid var(--sql-border)" },
  ".cm-activeLine": { backgroundColor: "var(--sql-active-line)" },
  ".cm-selectionBackground, &.cm-focused .cm-selectionBackground, ::selection": { backgroundColor: "var(--sql-selection) !important" },
  ".cm-cursor": { borderLeftColor: "var(--sql-fg)" },
  ".cm-tooltip": { backgroundColor: "var(--sql-bg)", color: "var(--sql-fg)", border: "1px solid var(--sql-border)" },
  ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: "var(--sql-selection)", color: "var(--sql-fg)" },
  ".cm-completionDetail": { color: "var(--sql-muted)" },
  ".cm-lintRange-error": { backgroundImage: "none", textDecoration: "underline wavy var(--sql-error)", textUnderlineOffset: "3px" },
  ".cm-placeholder": { color: "var(--sql-muted)" },
});

const highlight = HighlightStyle.define([
  { tag: tags.keyword, color: "var(--sql-keyword)", fontWeight: "600" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--sql-string)" },
  { tag: [tags.number, tags.bool, tags.null], color: "var(--sql-number)" },
  { tag: [tags.typeName, tags.standard(tags.name)], color: "var(--sql-name)" },
  { tag: tags.comment, color: "var(--sql-muted)", fontStyle: "italic" },
]);

/** The tables as CodeMirror's SQL schema: namespaces nest, each table with its columns when they are on hand. */
function schemaOf(vocabulary: EditorVocabulary): SQLNamespace {
  const root: Record<string, unknown> = {};
  for (const id of vocabulary.tables) {
    let node = root;
    for (const part of id.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    const columns = vocabulary.columns.get(id.join(".")) ?? [];
    node[id[id.length - 1]] = columns.map((c): Completion => ({ label: c.name, type: "property", detail: c.type }));
  }
  return root as SQLNamespace;
}

function languageOf(vocabulary: EditorVocabulary) {
  const language = sql({ dialect: PostgreSQL, schema: schemaOf(vocabulary), upperCaseKeywords: true });
  // Bare names: the columns of the tables the text names (their descriptions are the ones on hand), and the functions.
  const columns = new Map<string, Completion>();
  for (const [table, cols] of vocabulary.columns)
    for (const c of cols) if (!columns.has(c.name)) columns.set(c.name, { label: c.name, type: "property", detail: `${c.type} · ${table}`, boost: 1 });
  const names = completeFromList([
    ...columns.values(),
    ...vocabulary.functions.map((f): Completion => ({ label: f.name, type: f.kind === "table" ? "class" : "function", detail: f.kind, apply: `${f.name}(` })),
  ]);
  return [language, language.language.data.of({ autocomplete: names })];
}

/** The word at an offset: from it to the next character that cannot be in a name. */
function wordEnd(text: string, from: number): number {
  const m = /^[\w$."]+/.exec(text.slice(from));
  return Math.min(text.length, from + Math.max(1, m ? m[0].length : 1));
}

export function SqlEditor({
  value,
  onChange,
  onRun,
  vocabulary,
  error,
}: {
  value: string;
  onChange: (text: string) => void;
  onRun: () => void;
  vocabulary: EditorVocabulary;
  error: EditorError | null;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const languageSlot = useRef(new Compartment());
  // The handlers the editor calls are the latest ones, without making the editor again.
  const handlers = useRef({ onChange, onRun });
  useEffect(() => {
    handlers.current = { onChange, onRun };
  });

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          keymap.of([
            {
              key: "Mod-Enter",
              run: () => {
                handlers.current.onRun();
                return true;
              },
            },
            ...defaultKeymap,
            ...historyKeymap,
          ]),
          autocompletion({ activateOnTyping: true }),
          languageSlot.current.of([]),
          syntaxHighlighting(highlight),
          lintGutter(),
          theme,
          EditorView.lineWrapping,
          placeholder("SELECT … FROM namespace.table"),
          EditorView.contentAttributes.of({ "aria-label": "SQL statement", "data-testid": "sql-editor" }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) handlers.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
    // The editor is made once; the text it starts with is the value at that moment, and later values arrive below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({ effects: languageSlot.current.reconfigure(languageOf(vocabulary)) });
  }, [vocabulary]);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const text = editor.state.doc.toString();
    const diagnostics = error
      ? [
          {
            from: Math.min(error.position, text.length),
            to: wordEnd(text, Math.min(error.position, text.length)),
            severity: "error" as const,
            message: error.message,
          },
        ]
      : [];
    editor.dispatch(setDiagnostics(editor.state, diagnostics));
  }, [error]);

  return <div ref={host} className="min-w-0" />;
}
