/** Sending bodies the way TiTiler does. */
import type { FastifyReply } from 'fastify';
import { pyDumps } from '../pyjson.js';

export function sendJson(reply: FastifyReply, body: unknown, type = 'application/json'): FastifyReply {
  // A Buffer keeps Fastify from appending "; charset=utf-8": TiTiler sends the bare media type.
  return reply.type(type).send(Buffer.from(pyDumps(body), 'utf8'));
}
