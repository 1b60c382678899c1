// Structured Field Dictionaries (RFC 8941 §3.2), parsed as RFC 8941 §4.2.2 says. Only what targeted
// cache control (RFC 9213 §2.2) needs: a Dictionary parser. Strict: any error fails the whole field.
import { DQUOTE, EQUALS, isDigit, isTchar, SEMI } from './chars.js';

/** RFC 8941 §3.3 bare items. A Byte Sequence keeps its base64 text undecoded. */
export type SfBareItem =
  | { readonly type: 'integer'; readonly value: number }
  | { readonly type: 'decimal'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'token'; readonly value: string }
  | { readonly type: 'byte-sequence'; readonly base64: string }
  | { readonly type: 'boolean'; readonly value: boolean };

/** RFC 8941 §3.1.2 parameters, in order; a repeated key keeps its first position and last value. */
export type SfParameters = ReadonlyMap<string, SfBareItem>;

/** RFC 8941 §3.3: an Item is a bare item with parameters. */
export interface SfItem {
  readonly kind: 'item';
  readonly item: SfBareItem;
  readonly params: SfParameters;
}

/** RFC 8941 §3.1.1: an Inner List of Items, with parameters of its own. */
export interface SfInnerList {
  readonly kind: 'inner-list';
  readonly items: readonly SfItem[];
  readonly params: SfParameters;
}

export type SfMember = SfItem | SfInnerList;

const NO_PARAMS: SfParameters = new Map();
const TRUE: SfBareItem = Object.freeze({ type: 'boolean', value: true });

const SP = 0x20;
const HTAB = 0x09;
const COMMA = 0x2c;
const COLON = 0x3a;
const STAR = 0x2a;
const MINUS = 0x2d;
const DOT = 0x2e;
const QUESTION = 0x3f;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const BACKSLASH = 0x5c;

/** Thrown inside the parser only; parseSfDictionary turns it into null. */
class SfError extends Error {}

/**
 * Parses a Dictionary field value (RFC 8941 §4.2, §4.2.2). Several field lines must already be
 * joined with commas (§4.2 step 1; a HeaderMap value is). Returns the members in order; a repeated
 * key keeps its first position and takes the last value (§4.2.2). Returns null on any parse error:
 * §4.2 "fail parsing" means the whole field is ignored. An empty value is an empty Dictionary.
 * Never throws.
 */
export function parseSfDictionary(value: string): Map<string, SfMember> | null {
  const p = new Parser(value);
  try {
    p.skipSp(); // §4.2 step 2: discard leading SP
    const dict = p.dictionary();
    p.skipSp(); // §4.2 step 6: discard trailing SP; anything left fails
    return p.pos === value.length ? dict : null;
  } catch (e) {
    if (e instanceof SfError) return null;
    throw e;
  }
}

class Parser {
  pos = 0;
  constructor(private readonly s: string) {}

  private peek(): number {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }

  private fail(): never {
    throw new SfError();
  }

  skipSp(): void {
    while (this.peek() === SP) this.pos++;
  }

  private skipOws(): void {
    for (let c = this.peek(); c === SP || c === HTAB; c = this.peek()) this.pos++;
  }

  /** §4.2.2 Parsing a Dictionary. */
  dictionary(): Map<string, SfMember> {
    const dict = new Map<string, SfMember>();
    const len = this.s.length;
    while (this.pos < len) {
      const key = this.key();
      let member: SfMember;
      if (this.peek() === EQUALS) {
        this.pos++;
        member = this.itemOrInnerList();
      } else {
        member = { kind: 'item', item: TRUE, params: this.parameters() }; // a bare key is Boolean true
      }
      dict.set(key, member); // §4.2.2: a repeated key overwrites the value, keeping its position
      this.skipOws();
      if (this.pos >= len) return dict;
      if (this.s.charCodeAt(this.pos++) !== COMMA) this.fail();
      this.skipOws();
      if (this.pos >= len) this.fail(); // a trailing comma
    }
    return dict;
  }

  /** §4.2.1.1 Parsing an Item or Inner List. */
  private itemOrInnerList(): SfMember {
    return this.peek() === OPEN_PAREN ? this.innerList() : this.item();
  }

  /** §4.2.1.2 Parsing an Inner List. */
  private innerList(): SfInnerList {
    this.pos++; // "("
    const items: SfItem[] = [];
    while (this.pos < this.s.length) {
      this.skipSp();
      if (this.peek() === CLOSE_PAREN) {
        this.pos++;
        return { kind: 'inner-list', items, params: this.parameters() };
      }
      items.push(this.item());
      const c = this.peek();
      if (c !== SP && c !== CLOSE_PAREN) this.fail();
    }
    return this.fail(); // no closing ")"
  }

  /** §4.2.3 Parsing an Item. */
  private item(): SfItem {
    const item = this.bareItem();
    return { kind: 'item', item, params: this.parameters() };
  }

  /** §4.2.3.1 Parsing a Bare Item. */
  private bareItem(): SfBareItem {
    const c = this.peek();
    if (c === MINUS || isDigit(c)) return this.number();
    if (c === DQUOTE) return this.string();
    if (c === STAR || isAlpha(c)) return this.token();
    if (c === COLON) return this.byteSequence();
    if (c === QUESTION) return this.boolean();
    return this.fail();
  }

  /** §4.2.3.2 Parsing Parameters. */
  private parameters(): SfParameters {
    let params: Map<string, SfBareItem> | undefined;
    while (this.peek() === SEMI) {
      this.pos++;
      this.skipSp();
      const key = this.key();
      let value = TRUE;
      if (this.peek() === EQUALS) {
        this.pos++;
        value = this.bareItem();
      }
      (params ??= new Map()).set(key, value);
    }
    return params ?? NO_PARAMS;
  }

  /** §4.2.3.3 Parsing a Key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ). */
  private key(): string {
    const start = this.pos;
    const c = this.peek();
    if (!isLcalpha(c) && c !== STAR) this.fail();
    this.pos++;
    while (isKeyChar(this.peek())) this.pos++;
    return this.s.slice(start, this.pos);
  }

  /** §4.2.4 Parsing an Integer or Decimal: at most 15 digits, or 12 + "." + 1..3 digits. */
  private number(): SfBareItem {
    const start = this.pos;
    if (this.peek() === MINUS) this.pos++;
    if (!isDigit(this.peek())) this.fail();
    const digitsStart = this.pos;
    let dot = -1;
    for (let c = this.peek(); ; c = this.peek()) {
      if (isDigit(c)) {
        this.pos++;
      } else if (c === DOT && dot < 0) {
        if (this.pos - digitsStart > 12) this.fail();
        dot = this.pos++;
      } else {
        break;
      }
      if (dot < 0 && this.pos - digitsStart > 15) this.fail();
      if (dot >= 0 && this.pos - digitsStart > 16) this.fail();
    }
    const text = this.s.slice(start, this.pos);
    if (dot < 0) return { type: 'integer', value: Number(text) || 0 }; // no -0
    const fraction = this.pos - dot - 1;
    if (fraction === 0 || fraction > 3) this.fail();
    return { type: 'decimal', value: Number(text) };
  }

  /** §4.2.5 Parsing a String: printable ASCII, with only \" and \\ escaped. */
  private string(): SfBareItem {
    this.pos++; // DQUOTE
    const s = this.s;
    let out = '';
    let segStart = this.pos;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === BACKSLASH) {
        const next = this.pos + 1 < s.length ? s.charCodeAt(this.pos + 1) : -1;
        if (next !== DQUOTE && next !== BACKSLASH) this.fail();
        out += s.slice(segStart, this.pos);
        segStart = this.pos + 1;
        this.pos += 2;
      } else if (c === DQUOTE) {
        out += s.slice(segStart, this.pos++);
        return { type: 'string', value: out };
      } else if (c < 0x20 || c > 0x7e) {
        this.fail();
      } else {
        this.pos++;
      }
    }
    return this.fail(); // unterminated
  }

  /** §4.2.6 Parsing a Token: ( ALPHA / "*" ) *( tchar / ":" / "/" ). */
  private token(): SfBareItem {
    const start = this.pos++;
    for (let c = this.peek(); isTchar(c) || c === COLON || c === 0x2f; c = this.peek()) this.pos++;
    return { type: 'token', value: this.s.slice(start, this.pos) };
  }

  /** §4.2.7 Parsing a Byte Sequence: ":" base64 ":". */
  private byteSequence(): SfBareItem {
    const start = ++this.pos;
    for (let c = this.peek(); c !== COLON; c = this.peek()) {
      if (c < 0 || !isBase64Char(c)) this.fail(); // unterminated, or not base64 (§4.2.7 step 5)
      this.pos++;
    }
    return { type: 'byte-sequence', base64: this.s.slice(start, this.pos++) };
  }

  /** §4.2.8 Parsing a Boolean: "?1" or "?0". */
  private boolean(): SfBareItem {
    this.pos++; // "?"
    const c = this.peek();
    if (c !== 0x30 && c !== 0x31) this.fail();
    this.pos++;
    return c === 0x31 ? TRUE : { type: 'boolean', value: false };
  }
}

function isLcalpha(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}

function isAlpha(c: number): boolean {
  return isLcalpha(c) || (c >= 0x41 && c <= 0x5a);
}

function isKeyChar(c: number): boolean {
  return isLcalpha(c) || isDigit(c) || c === 0x5f || c === MINUS || c === DOT || c === STAR;
}

function isBase64Char(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2f || c === EQUALS;
}
