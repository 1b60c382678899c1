// PLACEHOLDER (being written)
import { z } from 'zod';
export const jsonpSchema = z.strictObject({ paths: z.array(z.string()) });
export const redirectsSchema = z.array(z.strictObject({ from: z.string(), to: z.string() }));
