/**
 * Strict HTTP/1.1 message heads (RFC 9112), parsed from raw bytes by the preview proxy in one
 * pass that also picks out the fields the proxy acts on. Anything a lenient parser would guess
 * at — a bare LF, a folded line, a space before the colon, a control character, a repeated Host —
 * is refused, so the proxy and the app behind it can never read one message two ways.
 */

import { PREVIEW_HEADER } from "../../../protocol/actions/preview.js";

/** A head that cannot be read: the status the client is answered with, and why. */
export class HeadError extends Error {
  constructor(
    readonly status: 400 | 431 | 501 | 502,
    message: string,
  ) {
    super(message);
  }
}

/** Header fields as sent: a flat list of names and values, names as spelled. */
export type RawHeaders = string[];

/** The fields both kinds of head are framed and routed by (values of repeated fields joined with ", "). */
export interface HeadFields {
  headers: RawHeaders;
  /** Connection, lower case ("" when absent). */
  connection: string;
  transferEncoding: string | undefined;
  contentLength: string | undefined;
}

export interface RequestHead extends HeadFields {
  method: string;
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  host: string | undefined;
  upgrade: string | undefined;
  /** Cookie fields joined with "; ". */
  cookie: string | undefined;
  accept: string | undefined;
  /** The daemon's own token header (see PREVIEW_HEADER). */
  previewToken: string | undefined;
}

export interface ResponseHead extends HeadFields {
  status: number;
  reason: string;
  minor: 0 | 1;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values: visible characters, spaces, tabs and obs-text; no other control character. */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** CRLF only: a bare CR or LF anywhere would make another parser see other lines. */
const BARE_CR_OR_LF = /\r(?!\n)|(?<!\r)\n/;
const TARGET = /^[\x21-\x7e\x80-\xff]+$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([^ ]+) HTTP\/1\.([01])$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r\n]*))?$/;

/** The index just past the blank line that ends a head in `buf` (searching from `from`), or -1. */
export function headEnd(buf: Buffer, from = 0): number {
  const at = buf.indexOf("\r\n\r\n", Math.max(0, from - 3), "latin1");
  return at < 0 ? -1 : at + 4;
}

function join(prior: string | undefined, value: string, separator = ", "): string {
  return prior === undefined ? value : `${prior}${separator}${value}`;
}

/**
 * Reads the header lines after the start line (`at` is where they begin) into `into`, with the
 * fields the proxy acts on; `request` also picks out the request's own.
 */
function readFields(head: string, at: number, into: RequestHead | ResponseHead, status: 400 | 502, request: RequestHead | undefined): void {
  const end = head.length - 2; // the blank line's CRLF
  let hosts = 0;
  let tokens = 0;
  while (at < end) {
    const eol = head.indexOf("\r\n", at);
    const first = head.charCodeAt(at);
    if (first === 32 || first === 9) throw new HeadError(status, "a folded header line (obs-fold) is not accepted");
    const colon = head.indexOf(":", at);
    if (colon < 0 || colon > eol)
      throw new HeadError(status, `header line ${JSON.stringify(head.slice(at, Math.min(eol, at + 40)))} has no colon`);
    const name = head.slice(at, colon);
    if (!TOKEN.test(name))
      throw new HeadError(status, `header line ${JSON.stringify(head.slice(at, Math.min(eol, at + 40)))} has no valid field name`);
    let from = colon + 1;
    let to = eol;
    while (from < to && (head.charCodeAt(from) === 32 || head.charCodeAt(from) === 9)) from++;
    while (to > from && (head.charCodeAt(to - 1) === 32 || head.charCodeAt(to - 1) === 9)) to--;
    const value = head.slice(from, to);
    if (BAD_VALUE.test(value)) throw new HeadError(status, `header ${name} holds a control character`);
    into.headers.push(name, value);
    switch (name.length) {
      case 4:
        if (request && name.toLowerCase() === "host") {
          hosts++;
          request.host = value;
        }
        break;
      case 6:
        if (request) {
          const lower = name.toLowerCase();
          if (lower === "cookie") request.cookie = join(request.cookie, value, "; ");
          else if (lower === "accept") request.accept = join(request.accept, value);
        }
        break;
      case 7:
        if (request && name.toLowerCase() === "upgrade") request.upgrade = join(request.upgrade, value);
        break;
      case 10:
        if (name.toLowerCase() === "connection") into.connection = join(into.connection || undefined, value.toLowerCase());
        break;
      case 14:
        if (name.toLowerCase() === "content-length") into.contentLength = join(into.contentLength, value);
        break;
      case 17:
        if (name.toLowerCase() === "transfer-encoding") into.transferEncoding = join(into.transferEncoding, value);
        break;
    }
    if (request && name.length === PREVIEW_HEADER.length && name.toLowerCase() === PREVIEW_HEADER) {
      tokens++;
      request.previewToken = value;
    }
    at = eol + 2;
  }
  if (hosts > 1) throw new HeadError(400, "the Host header is sent more than once");
  if (tokens > 1) throw new HeadError(400, "the preview token header is sent more than once");
}

/** Parses a request head (its text up to and with the blank line; leading empty lines are skipped). */
export function parseRequestHead(text: string): RequestHead {
  let start = 0;
  while (text.startsWith("\r\n", start)) start += 2;
  if (BARE_CR_OR_LF.test(text)) throw new HeadError(400, "a bare CR or LF in the request head");
  const eol = text.indexOf("\r\n", start);
  const line = text.slice(start, eol);
  const m = REQUEST_LINE.exec(line);
  if (!m) {
    const version = line.slice(line.lastIndexOf(" ") + 1);
    if (/^HTTP\/\d/.test(version) && line.split(" ").length === 3)
      throw new HeadError(501, `${version.slice(0, 20)} is not HTTP/1.0 or HTTP/1.1`);
    throw new HeadError(400, "the request line is not METHOD TARGET HTTP/1.x");
  }
  if (!TARGET.test(m[2]!)) throw new HeadError(400, "the request target holds control characters");
  const head: RequestHead = {
    method: m[1]!,
    target: m[2]!,
    minor: m[3] === "1" ? 1 : 0,
    headers: [],
    connection: "",
    transferEncoding: undefined,
    contentLength: undefined,
    host: undefined,
    upgrade: undefined,
    cookie: undefined,
    accept: undefined,
    previewToken: undefined,
  };
  readFields(text, eol + 2, head, 400, head);
  return head;
}

/** Parses a response head from an app; a malformed one fails the request with 502. */
export function parseResponseHead(text: string): ResponseHead {
  if (BARE_CR_OR_LF.test(text)) throw new HeadError(502, "a bare CR or LF in the app's response head");
  const eol = text.indexOf("\r\n");
  const m = STATUS_LINE.exec(text.slice(0, eol));
  if (!m) throw new HeadError(502, "the app's status line is not HTTP/1.x NNN");
  const head: ResponseHead = {
    status: Number(m[2]),
    reason: m[3] ?? "",
    minor: m[1] === "1" ? 1 : 0,
    headers: [],
    connection: "",
    transferEncoding: undefined,
    contentLength: undefined,
  };
  readFields(text, eol + 2, head, 502, undefined);
  return head;
}

/** Whether a comma-separated list (lower case, as `connection` is) holds a token. */
export function hasToken(list: string, token: string): boolean {
  if (list === token) return true;
  if (!list.includes(token)) return false;
  return list.split(",").some((t) => t.trim() === token);
}

/** The tokens of a comma-separated list, lower case: header names a Connection field makes hop-by-hop too. */
export function tokenSet(list: string): ReadonlySet<string> {
  return new Set(
    list
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}
