export interface FoundImport {
  line: number;
  specifier: string;
  kind: string;
}
export function findImports(src: string): FoundImport[];
