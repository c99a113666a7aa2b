/**
 * Type-checks a documentation sample against the built package, as a host's file would be: the
 * sample is given as text under `fileName` (which need not exist), everything else is read from
 * disk. Answers the problems as `sample:<line>: <text>` (or the other file's name), none when it
 * compiles. Used by the tests that keep the docs' code samples true.
 */
import ts from 'typescript';

export function typecheckSample(source: string, fileName: string, extra: ts.CompilerOptions = {}): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
    ...extra,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) => (name === fileName ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file || d.start === undefined) return text;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${d.file.fileName === fileName ? 'sample' : d.file.fileName}:${line + 1}: ${text}`;
  });
}
