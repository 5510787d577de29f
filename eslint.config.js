// ESLint and typescript-eslint live in the tools/lint workspace (with the TypeScript 5.9 they need); see its config.
export { default } from './tools/lint/eslint.config.js';
