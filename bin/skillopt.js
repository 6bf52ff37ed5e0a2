#!/usr/bin/env node
import path from 'node:path';
import { entryOf } from './entry.js';

const entry = entryOf(path.resolve(import.meta.dirname, '..'));
if (!entry.compiled) (await import('tsx/esm/api')).register();
const { main } = await import(entry.url);
process.exitCode = await main(process.argv);
