import { TextDocument } from 'vscode-languageserver-textdocument';
import { createConnection, DiagnosticSeverity, ProposedFeatures, TextDocuments, TextDocumentSyncKind, type Diagnostic } from 'vscode-languageserver/node';
import { checkManifestText } from '../core/harness/manifestSyntax';

/**
 * Language server for harness files. For now it reports manifest syntax and shape
 * problems with their line and column; schema completion and hovers come with the
 * harness manifest schema.
 */
const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);

connection.onInitialize(() => ({ capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental } }));

function validate(doc: TextDocument) {
  const diagnostics: Diagnostic[] = checkManifestText(doc.getText()).map((p) => ({
    severity: p.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    range: { start: { line: p.line - 1, character: p.column - 1 }, end: { line: p.line - 1, character: p.column - 1 + Math.max(1, p.length) } },
    message: p.message,
    source: 'evotrainer',
  }));
  void connection.sendDiagnostics({ uri: doc.uri, diagnostics });
}

documents.onDidChangeContent((e) => validate(e.document));
documents.listen(connection);
connection.listen();
