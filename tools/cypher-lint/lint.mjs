// Lints Cypher with Neo4j's own Cypher front end (@neo4j-cypher/language-support:
// the ANTLR grammar plus Neo4j's semantic analysis compiled to JavaScript).
//
// stdin:  JSON array of {"name": str, "query": str}
// stdout: JSON array of {"name": str, "errors": [{"version", "line", "column", "message"}]}
//
// Each query is checked as Cypher 5 and as Cypher 25 (a Neo4j server may default to
// either). Only diagnostics of severity Error are reported; warnings (e.g. labels that
// are "not present in the database", deprecations) are ignored. Parameters are declared
// from the query itself, so `$x` is never an error; function names are checked against
// Neo4j's built-in functions. Exit 0 when linting ran (whatever it found), 2 otherwise.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The package's ESM build has extension-less imports that Node cannot resolve: use CJS.
const require = createRequire(import.meta.url);
const ls = require('@neo4j-cypher/language-support');

const VERSIONS = ['CYPHER 5', 'CYPHER 25'];
const SEVERITY_ERROR = 1; // vscode-languageserver DiagnosticSeverity.Error

function builtinFunctions() {
  const all = ls.testData?.mockSchema?.functions;
  if (!all) throw new Error('language-support no longer ships its function list');
  const out = {};
  for (const version of VERSIONS) {
    const fns = all[version];
    if (!fns) throw new Error(`no function list for ${version}`);
    out[version] = Object.fromEntries(Object.entries(fns).filter(([, f]) => f.isBuiltIn));
  }
  return out;
}

function lint(query, functions) {
  const parameters = Object.fromEntries(
    ls.parseParameters(query, false).map((p) => [p, null]),
  );
  const seen = new Set();
  const errors = [];
  for (const version of VERSIONS) {
    const schema = { functions, parameters, defaultLanguage: version };
    for (const d of ls.lintCypherQuery(query, schema, false)) {
      if (d.severity !== SEVERITY_ERROR) continue;
      const error = {
        version,
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        message: d.message,
      };
      const key = `${version}|${error.line}|${error.column}|${error.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        errors.push(error);
      }
    }
  }
  return errors;
}

function main() {
  const input = JSON.parse(readFileSync(0, 'utf8'));
  if (!Array.isArray(input)) throw new Error('stdin must be a JSON array of {name, query}');
  const functions = builtinFunctions();
  const results = input.map(({ name, query }) => {
    if (typeof name !== 'string' || typeof query !== 'string') {
      throw new Error(`bad item: ${JSON.stringify({ name, query })}`);
    }
    return { name, errors: lint(query, functions) };
  });
  process.stdout.write(JSON.stringify(results, null, 1) + '\n');
}

try {
  main();
} catch (err) {
  process.stderr.write(`cypher-lint: ${err?.stack ?? err}\n`);
  process.exit(2);
}
