export * from './errors.js';
export * from './service.js';
