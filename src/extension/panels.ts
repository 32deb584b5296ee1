// Panels that run the engine (the rollout store, diagnostics): a bundle of their own,
// required on first use so that activation never loads them.
export { HealthPanel } from './webviews/health/healthPanel';
export { judgeRollouts, setLlmApiKey } from './commands/judge';
