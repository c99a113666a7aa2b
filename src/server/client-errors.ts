/**
 * Errors of a connection before any route runs: a request that did not arrive within the
 * connection limits (408), headers over Node's size limit (431), bytes that are not HTTP (400).
 * They answer the contract's error body like every other failure, then the connection closes.
 * Nothing is logged: under a flood of half-sent requests a log line each would be the flood's echo.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../contract/response-schemas.js';
import { errorResponse } from '../contract/responses.js';

function codeOf(error: { readonly code?: string }): ErrorCode {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  return 'bad_request';
}

/** The `clientError` listener of the server's HTTP servers. */
export function clientErrorHandler(error: Error & { readonly code?: string }, socket: Duplex): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // As Node does: answer only when no answer has begun on this connection.
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && current?.headersSent !== true) {
    const answer = errorResponse(codeOf(error));
    const body = JSON.stringify(answer.body);
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
