// What reaches a terminal: the one escaping function for every name, field value and certificate field
// the CLI prints, and its JSON counterpart. Pure, no I/O.
//
// A terminal acts on C0 (ESC starts CSI/OSC sequences: titles, screen clears; BEL, CR, LF reshape lines),
// DEL, and C1 (U+0080-U+009F: 0x9B is CSI and 0x9D is OSC on terminals that read 8-bit controls).
// Bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069, Unicode UAX #9 §2) reorder what follows, so
// `evil\u202Egpj.js` reads as `eviljs.jpg`; U+2028/U+2029 end a line on some terminals and in JavaScript.

/** The code points escaped: C0, DEL, C1, U+2028/U+2029, bidi embeddings/overrides/isolates. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function hex(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * The text as it may be written to a terminal: each unsafe code point as `\xNN` (up to U+00FF) or
 * `\uNNNN`, everything else unchanged. One line in, one line out: a newline in a file name is `\x0a`.
 */
export function forTerminal(s: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(s) ? s.replace(UNSAFE, hex) : s;
}

/**
 * A message of several lines we composed (config issues, one per line): each line through forTerminal,
 * the line breaks kept. A name inside should be escaped where the message is built (forTerminal is
 * idempotent: its output has no unsafe code point), so its own newline cannot pass for ours.
 */
export function forTerminalLines(s: string): string {
  return s.split('\n').map(forTerminal).join('\n');
}

/** Code points JSON.stringify leaves raw that a terminal (C1, DEL, bidi) or a JS parser (U+2028/9) acts on. */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify whose text holds no raw control, line separator or bidi code point: those are written
 * as `\u0085` etc. (RFC 8259 §7), so the text is still valid JSON with the same value. They can only
 * occur inside strings (JSON's own syntax is ASCII), where the escape means the same code point.
 */
export function jsonForTerminal(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    JSON_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
