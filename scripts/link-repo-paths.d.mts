export const REPO: string;
export const BARE: RegExp;
export function repoUrl(path: string): string;
export function linkMentions(markdown: string): string;
