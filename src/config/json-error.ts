// Where a config file stops being JSON (RFC 8259), as line and column: JSON.parse's message gives at
// most an offset on Node 20 and, for some mistakes, quotes the text instead. This scanner is run only
// after JSON.parse has failed, to find the first offending character and say what was expected there.

export interface JsonErrorAt {
  /** Offset of the offending character (UTF-16 units; text.length for the end of the file). */
  readonly offset: number;
  /** 1-based line and column (UTF-16 units) of the offending character. */
  readonly line: number;
  readonly column: number;
  readonly reason: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** RFC 8259 §2: insignificant whitespace. */
const WS = new Set([' ', '\t', '\n', '\r']);
/** RFC 8259 §6. */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function locateJsonError(text: string): JsonErrorAt | undefined {
  let i = 0;
  const what = (): string => {
    if (i >= text.length) return 'the end of the file';
    const c = text[i]!;
    if (c === '/') return '"/" (JSON has no comments)';
    if (c === "'") return `"'" (JSON strings take double quotes)`;
    return JSON.stringify(c);
  };
  const stop = (reason: string): never => {
    throw new Stop(i, reason);
  };
  const ws = (): void => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const string = (): void => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) stop('a string is not closed');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      // RFC 8259 §7: control characters must be escaped.
      if (c < 0x20)
        stop(`a control character (${what()}) inside a string: write it as an escape (\\n, \\t, \\u00XX)`);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else {
          i++;
          stop(`a bad escape in a string: \\${text[i] ?? ''}`);
        }
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') object();
    else if (c === '[') array();
    else if (c === '"') string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) {
        i++; // only a '-' can start a number that does not match
        stop(`expected a digit after "-", found ${what()}`);
      }
      i = NUMBER.lastIndex;
    } else {
      for (const word of ['true', 'false', 'null']) {
        if (text.startsWith(word, i)) {
          i += word.length;
          return;
        }
      }
      stop(`expected a value, found ${what()}`);
    }
  };
  const object = (): void => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') {
        stop(
          text[i] === '}'
            ? 'expected a key after ",", found "}" (JSON has no trailing commas)'
            : `expected a key in double quotes, found ${what()}`,
        );
      }
      string();
      ws();
      if (text[i] !== ':') stop(`expected ':' after the key, found ${what()}`);
      i++;
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      stop(`expected ',' or '}', found ${what()}`);
    }
  };
  const array = (): void => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === ']') stop('expected a value after ",", found "]" (JSON has no trailing commas)');
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      stop(`expected ',' or ']', found ${what()}`);
    }
  };
  try {
    value();
    ws();
    if (i < text.length) stop(`expected the end of the file after the value, found ${what()}`);
    return undefined;
  } catch (err) {
    // Nesting deeper than the stack: no position (the caller keeps JSON.parse's message).
    if (!(err instanceof Stop)) return undefined;
    return { offset: err.offset, ...lineColumn(text, err.offset), reason: err.reason };
  }
}

/** 1-based line and column of an offset (a line ends at LF; a CR before it is part of the line). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let j = text.indexOf('\n'); j !== -1 && j < offset; j = text.indexOf('\n', j + 1)) {
    line++;
    start = j + 1;
  }
  return { line, column: offset - start + 1 };
}
