/**
 * GET /algorithms and /algorithms/{algorithmId} (TiTiler's AlgorithmFactory), and `parseAlgorithm`,
 * which turns an image route's `algorithm` / `algorithm_params` query values into a step to apply.
 */
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../errors.js';
import { ALGORITHM_IDS, ALGORITHMS, isAlgorithmId, type AlgorithmInfo } from '../../image/algorithms/index.js';
import { float, floats } from '../../pyjson.js';
import { sendJson } from '../reply.js';

/** The metadata as TiTiler serializes it: JSON-schema "number" values and output ranges are Python floats. */
function pythonMetadata(info: AlgorithmInfo): unknown {
  const parameters: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(info.parameters)) {
    const num = (v: number): unknown => (p.type === 'number' ? float(v) : v);
    parameters[name] = { default: num(p.default), maximum: num(p.maximum), minimum: num(p.minimum), title: p.title, type: p.type };
  }
  const { nbands, dtype, min, max } = info.outputs;
  return {
    title: info.title,
    description: info.description,
    inputs: { ...info.inputs },
    outputs: { nbands, dtype, min: min && floats(min), max: max && floats(max) },
    parameters,
  };
}

export function algorithmRoutes() {
  return async function routes(app: FastifyInstance): Promise<void> {
    app.get('/algorithms', { schema: { summary: 'Retrieve the list of available Algorithms.', operationId: 'getAlgorithms' } }, async (_request, reply) => {
      const body: Record<string, unknown> = {};
      for (const id of ALGORITHM_IDS) body[id] = pythonMetadata(ALGORITHMS[id]);
      return sendJson(reply, body);
    });

    app.get<{ Params: { algorithmId: string } }>(
      '/algorithms/:algorithmId',
      {
        schema: {
          summary: 'Retrieve the metadata of the specified algorithm.',
          operationId: 'getAlgorithm',
          // An enum, as TiTiler's Literal path parameter: unknown ids are a 422 literal_error.
          params: { type: 'object', properties: { algorithmId: { type: 'string', enum: [...ALGORITHM_IDS] } }, required: ['algorithmId'] },
        },
      },
      async (request, reply) => {
        const id = request.params.algorithmId;
        if (!isAlgorithmId(id)) throw badRequest(`Unknown algorithm '${id}'`); // unreachable past the schema
        return sendJson(reply, pythonMetadata(ALGORITHMS[id]));
      },
    );
  };
}
