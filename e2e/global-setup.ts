// Builds the project's image from deploy/Dockerfile once for the whole e2e run and hands its
// name to the scenarios (inject('e2eImage')).

import type { TestProject } from 'vitest/node';
import { buildImage } from './image.js';

declare module 'vitest' {
  export interface ProvidedContext {
    e2eImage: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('e2eImage', await buildImage());
}
