/** Sending bodies the way TiTiler does. */
import type { FastifyReply } from 'fastify';
import { pyDumps } from '../pyjson.js';

export function sendJson(reply: FastifyReply, body: unknown, type = 'application/json'): FastifyReply {
  // A Buffer keeps Fastify from appending "; charset=utf-8": TiTiler sends the bare media type.
  return reply.type(type).send(Buffer.from(pyDumps(body), 'utf8'));
}

/** TiTiler's 404 body, for a path piece a route took but cannot read (Starlette would have matched no route). */
export function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('application/json').send({ detail: 'Not Found' });
}
