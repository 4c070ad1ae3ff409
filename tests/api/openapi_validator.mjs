// docs/api/openapi.json as a validator: the document itself against the OpenAPI 3.1
// schema (@seriousme/openapi-schema-validator), and any answer of the API against the
// operation and status it documents (Ajv, JSON Schema 2020-12, the dialect of OpenAPI
// 3.1). Used by openapi_check.mjs and api_clients_test.mjs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'npm', 'package.json'));
const Ajv2020 = require('ajv/dist/2020').default;
const { Validator } = require('@seriousme/openapi-schema-validator');

export const documentPath = path.join(here, '..', '..', 'docs', 'api', 'openapi.json');

export async function validateDocument(file = documentPath) {
  const result = await new Validator().validate(file);
  if (!result.valid) throw new Error(`${file} is not valid OpenAPI 3.1: ${JSON.stringify(result.errors)}`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

const pointer = (parts) => '#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function answerValidator(doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');
  const cache = new Map();
  const resolve = (obj) => {
    while (obj && obj.$ref) {
      const parts = obj.$ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
      obj = parts.reduce((o, k) => o[k], doc);
    }
    return obj;
  };
  // Throws naming what does not fit; returns quietly for an answer the document allows.
  return function check({ method, path: route, status, content_type: type, body }) {
    const op = doc.paths[route]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${route}: no such operation in the document`);
    const declared = op.responses[String(status)];
    if (!declared) throw new Error(`${method} ${route}: status ${status} is not documented (${body})`);
    const response = resolve(declared);
    const media = (type || '').split(';')[0].trim();
    if (!response.content) {
      if (body) throw new Error(`${method} ${route} ${status}: a body where none is documented`);
      return;
    }
    if (!response.content[media]) throw new Error(`${method} ${route} ${status}: content type ${media} is not documented`);
    if (media !== 'application/json') return;
    const key = `${route} ${method} ${status}`;
    if (!cache.has(key)) {
      const where = declared.$ref
        ? declared.$ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/')).concat(['content', media, 'schema'])
        : ['paths', route, method.toLowerCase(), 'responses', String(status), 'content', media, 'schema'];
      cache.set(key, ajv.compile({ $ref: 'openapi.json' + pointer(where) }));
    }
    const validate = cache.get(key);
    const value = typeof body === 'string' ? JSON.parse(body) : body;
    if (!validate(value))
      throw new Error(`${method} ${route} ${status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 400)}`);
  };
}
