// Runs before every test file (vitest.config.ts's setupFiles). Its afterAll is registered first, so it runs last,
// after the file's own hooks have closed the servers and browsers that read those folders.
import { afterAll } from 'vitest';
import { removeTestTempDirs } from './temp-dirs.ts';

afterAll(removeTestTempDirs);
