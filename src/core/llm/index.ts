export * from './chat';
export * from './openai';
