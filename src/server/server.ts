import { TextDocument } from 'vscode-languageserver-textdocument';
import { createConnection, DiagnosticSeverity, ProposedFeatures, TextDocuments, TextDocumentSyncKind, type Diagnostic } from 'vscode-languageserver/node';
import { parseUserMetric } from '../core/diagnose/userDiagnostics';
import { codeLenses, completion, definition, hover } from './features';
import { classify } from './harnessFiles';
import { builtinMetricsDocument } from './metricIndex';
import { lineRange } from './positions';
import { StoreValues } from './storeValues';
import { diagnosticsFor } from './validate';

/**
 * Language server for harness files: evotrainer.yaml, diagnostics/rules/*.yaml,
 * diagnostics/metrics/*.sql|py, skills/*.md, and the reward and filter code.
 *
 * - diagnostics at their exact place, from the engine's own checks (checkManifest,
 *   parseUserRules, parseUserMetric, skillSchema);
 * - completion of metric names, threshold keys and operators, manifest keys and values,
 *   harness paths;
 * - hover: a metric's definition and its latest value in the harness's rollout store;
 * - go to definition from a metric reference to its metric file, or to the built-in
 *   catalog (a read-only document the client serves: `evotrainer/builtinMetrics`);
 * - the "Backtest this change" lens on reward and filter functions.
 */
const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const values = new StoreValues();

connection.onInitialize(() => ({
  capabilities: {
    textDocumentSync: TextDocumentSyncKind.Incremental,
    completionProvider: { triggerCharacters: [':', ' ', '/', '{', ','] },
    hoverProvider: true,
    definitionProvider: true,
    codeLensProvider: { resolveProvider: false },
  },
}));

const fileOf = (uri: string) => {
  const doc = documents.get(uri);
  const f = doc ? classify(uri, doc.languageId) : null;
  return doc && f ? { doc, f } : null;
};

/** SQL errors of metric files by URI, from their last run over the store (and the version they ran on). */
const sqlProblems = new Map<string, { version: number; diagnostics: Diagnostic[] }>();

function validate(doc: TextDocument) {
  const f = classify(doc.uri, doc.languageId);
  if (!f) return;
  let diagnostics: Diagnostic[];
  try {
    diagnostics = diagnosticsFor(doc, f);
  } catch (err) {
    connection.console.error(`${doc.uri}: validation failed: ${String(err)}`);
    return;
  }
  const sql = sqlProblems.get(doc.uri);
  if (sql && sql.version === doc.version) diagnostics.push(...sql.diagnostics);
  void connection.sendDiagnostics({ uri: doc.uri, diagnostics });
}

async function checkMetricSql(doc: TextDocument) {
  const f = classify(doc.uri, doc.languageId);
  if (f?.kind !== 'metric' || !f.root || !f.file) return;
  const { metric } = parseUserMetric(f.file, doc.getText());
  if (!metric || metric.script) return;
  const version = doc.version;
  const problems = await values.checkSql(f.root, metric);
  if (!problems || documents.get(doc.uri)?.version !== version) return;
  sqlProblems.set(doc.uri, { version, diagnostics: problems.map((p) => ({ range: lineRange(doc, p.line ?? 1), severity: DiagnosticSeverity.Error, message: p.message, source: 'evotrainer' })) });
  validate(doc);
}

documents.onDidChangeContent((e) => validate(e.document));
// A SQL metric also runs (read-only) over the store when opened and saved, for the errors
// only DuckDB sees; not on every keystroke.
documents.onDidOpen((e) => void checkMetricSql(e.document));
documents.onDidSave((e) => void checkMetricSql(e.document));
// A closed file's problems go with it (the engine reports them again when it runs).
documents.onDidClose((e) => {
  sqlProblems.delete(e.document.uri);
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});
// A saved metric file changes what rules may name: check the open rules again.
documents.onDidSave((e) => {
  if (classify(e.document.uri)?.kind === 'metric') for (const d of documents.all()) if (classify(d.uri)?.kind === 'rule') validate(d);
});
connection.onDidChangeWatchedFiles(() => {
  for (const d of documents.all()) validate(d);
});

connection.onCompletion((p) => {
  const x = fileOf(p.textDocument.uri);
  return x ? completion(x.doc, x.f, p.position) : [];
});
connection.onHover(async (p) => {
  const x = fileOf(p.textDocument.uri);
  return x ? hover(x.doc, x.f, p.position, values) : null;
});
connection.onDefinition((p) => {
  const x = fileOf(p.textDocument.uri);
  return x ? definition(x.doc, x.f, p.position) : null;
});
connection.onCodeLens((p) => {
  const x = fileOf(p.textDocument.uri);
  return x ? codeLenses(x.doc, x.f) : [];
});
connection.onRequest('evotrainer/builtinMetrics', () => ({ text: builtinMetricsDocument().text }));

documents.listen(connection);
connection.listen();
