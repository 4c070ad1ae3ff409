// The OpenAPI document is valid OpenAPI 3.1, and every answer the API suites logged
// (TGW_API_RESPONSE_LOG, one JSON line each: method, path, status, content_type, body)
// fits the operation and status it documents. Usage:
//   node openapi_check.mjs [responses.jsonl ...]
import { existsSync, readFileSync } from 'node:fs';
import { validateDocument, answerValidator } from './openapi_validator.mjs';

const doc = await validateDocument();
const check = answerValidator(doc);
let answers = 0;
const failures = [];
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.log(`${file}: no answers logged (the API suites did not run)`);
    continue;
  }
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const answer = JSON.parse(line);
    if (!answer.path) continue;
    answers++;
    try {
      check(answer);
    } catch (e) {
      failures.push(e.message);
    }
  }
}
const unique = [...new Set(failures)];
for (const f of unique) console.error(f);
console.log(`openapi: the document is valid; ${answers} answers checked, ${unique.length} distinct failures`);
process.exit(unique.length === 0 ? 0 : 1);
