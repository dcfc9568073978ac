/**
 * Text that people read: in a terminal (Terraform prints a lock's holder to every operator who meets
 * the lock; the CLI prints unit names, reasons and descriptions), in a log, in the audit trail. A
 * control character there can clear the screen, move the cursor, hide or rewrite a line, or make a
 * hyperlink (`ESC ] 8`); a bidirectional override can make the text read as something else. So
 * every such text is stripped of them at the edge where it enters (`printableText`), or refused
 * there where a name must be exact (`hasControlCharacters`); and text that may hold them whatever
 * was done where it entered (a state's own values) shows them visibly where it leaves
 * (`visibleText`, `jsonWithVisibleControls`).
 *
 * Nothing here touches Node: the SDK bundles it for the CLI.
 *
 * @module
 */

/** Tab, line feed and carriage return, in runs: whitespace a one-line text shows as one space. */
const LINE_BREAKS = /[\t\n\r]+/g

/**
 * The C0 controls (ESC among them), DEL, the C1 controls, and the Unicode bidirectional
 * embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
 */
// eslint-disable-next-line no-control-regex -- naming the control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
const EVERY_CONTROL = new RegExp(CONTROLS.source, 'g')

/** What `JSON.stringify` leaves raw of `CONTROLS`: it escapes only U+0000 to U+001F. */
const RAW_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** Printable ASCII, space included, and without it. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/
const VISIBLE_ASCII = /^[\x21-\x7e]*$/

/**
 * A text as it may be kept and shown: tabs and line breaks become one space, every other control
 * character is dropped. Stripped rather than refused, so that no client, however odd its text, is
 * turned away (a lock's `Info`, a forced unlock's reason, a role's description).
 */
export function printableText(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(EVERY_CONTROL, '')
}

/** Whether a text holds any control character (see `printableText`), a line break included. */
export function hasControlCharacters(text: string): boolean {
  return CONTROLS.test(text)
}

/** Whether a text is made only of printable ASCII (`visible`: and no space). */
export function isPrintableAscii(text: string, { spaces = true } = {}): boolean {
  return (spaces ? PRINTABLE_ASCII : VISIBLE_ASCII).test(text)
}

/**
 * A text for a terminal with each control character written out as an escape, so that none acts
 * and none is hidden either: `\t`, `\n`, `\r`, `\x1b` (two hex digits up to U+009F), `\u202e`.
 * Any other character is left as it is.
 */
export function visibleText(text: string): string {
  return text.replace(EVERY_CONTROL, escapeOf)
}

/**
 * JSON text as `JSON.stringify` writes it, with the control characters it leaves raw (DEL, C1,
 * the bidirectional ones) written as `\u` escapes as well: the same JSON value, safe to print.
 * They can only stand inside strings, where such an escape means the same character.
 */
export function jsonWithVisibleControls(json: string): string {
  return json.replace(RAW_IN_JSON, (char) => `\\u${hex(char, 4)}`)
}

const NAMED: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' }

function escapeOf(char: string): string {
  return NAMED[char] ?? (char <= '\u009f' ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`)
}

function hex(char: string, digits: number): string {
  return char.charCodeAt(0).toString(16).padStart(digits, '0')
}
