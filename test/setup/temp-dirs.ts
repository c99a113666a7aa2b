/** After each test file: its scratch directories go (test/temp-dirs.ts). */
import { afterAll } from 'vitest';
import { removeTempDirs } from '../temp-dirs.js';

afterAll(() => removeTempDirs());
