/**
 * What sendpool needs from the `smpp` package (an optional peer, 0.5.x), as structural types, and
 * its loader. The package is loaded when an SMPP channel is created, so hosts that never speak SMPP
 * do not need it (the same way the durable server loads libsql).
 */
import type { EventEmitter } from 'node:events';
import type { Server as NetServer, Socket } from 'node:net';
import { loadPeer } from '../../runtime/peers.js';

/** A decoded PDU: the command, its header and its fields (`short_message`, TLVs…) by name. */
export interface SmppPdu {
  readonly command: string;
  readonly command_status: number;
  sequence_number: number;
  readonly [field: string]: unknown;
  isResponse(): boolean;
  response(options?: Record<string, unknown>): SmppPdu;
  toBuffer(): Buffer;
}

/** One SMPP connection of the package's server side (the tests' SMSC; the channel has its own, smpp-connection.ts). */
export interface SmppSession extends EventEmitter {
  readonly socket: Socket;
  /** Sends a PDU; false when the socket is not writable (nothing was sent, no callback will run). */
  send(pdu: SmppPdu, onResponse?: (response: SmppPdu) => void): boolean;
  close(callback?: () => void): void;
  destroy(callback?: () => void): void;
}

/** The server side (a local SMSC in tests and benchmarks). */
export interface SmppServer extends NetServer {
  readonly sessions: SmppSession[];
}

export interface SmppModule {
  PDU: new (command: string, options?: Record<string, unknown>) => SmppPdu;
  createServer(listener?: (session: SmppSession) => void): SmppServer;
}

let loaded: Promise<SmppModule> | undefined;

/** Loads the `smpp` package once; a clear error when it is not installed. */
export function loadSmpp(): Promise<SmppModule> {
  // The package ships no types; its shape is declared above instead.
  loaded ??= loadPeer<{ default?: SmppModule } & SmppModule>('smpp', 'The SMPP channel').then(
    (mod) => mod.default ?? mod,
    (e: unknown) => {
      loaded = undefined;
      throw e;
    },
  );
  return loaded;
}

/** SMPP 3.4 command_status values the channel treats specially (5.1.3). */
export const SMPP_STATUS = {
  ESME_ROK: 0x00,
  ESME_RINVBNDSTS: 0x04,
  ESME_RMSGQFUL: 0x14,
  ESME_RTHROTTLED: 0x58,
  /** ESME receiver temporary error: the SMSC delivers the `deliver_sm` again later. */
  ESME_RX_T_APPN: 0x64,
} as const;

/** Names of common command_status values, for failure reasons. */
export const SMPP_STATUS_NAMES: Readonly<Record<number, string>> = {
  0x01: 'ESME_RINVMSGLEN',
  0x02: 'ESME_RINVCMDLEN',
  0x03: 'ESME_RINVCMDID',
  0x04: 'ESME_RINVBNDSTS',
  0x05: 'ESME_RALYBND',
  0x08: 'ESME_RSYSERR',
  0x0a: 'ESME_RINVSRCADR',
  0x0b: 'ESME_RINVDSTADR',
  0x0d: 'ESME_RBINDFAIL',
  0x0e: 'ESME_RINVPASWD',
  0x0f: 'ESME_RINVSYSID',
  0x14: 'ESME_RMSGQFUL',
  0x43: 'ESME_RINVESMCLASS',
  0x45: 'ESME_RSUBMITFAIL',
  0x48: 'ESME_RINVSRCTON',
  0x49: 'ESME_RINVSRCNPI',
  0x50: 'ESME_RINVDSTTON',
  0x51: 'ESME_RINVDSTNPI',
  0x58: 'ESME_RTHROTTLED',
  0x62: 'ESME_RINVEXPIRY',
  0x64: 'ESME_RX_T_APPN',
  0xfe: 'ESME_RDELIVERYFAILURE',
  0xff: 'ESME_RUNKNOWNERR',
  0x104: 'ESME_RINVDCS',
};

/** `SMPP 0x0000000b ESME_RINVDSTADR`: a command_status as a failure reason. */
export function smppStatusText(status: number): string {
  const name = SMPP_STATUS_NAMES[status];
  return `SMPP 0x${status.toString(16).padStart(8, '0')}${name ? ` ${name}` : ''}`;
}
