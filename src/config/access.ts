// PLACEHOLDER (being written)
import { z } from 'zod';
export const rateLimitSchema = z.strictObject({ requestsPerSec: z.number() });
export const authSchema = z.array(z.strictObject({ prefix: z.string() }));
export const headersSchema = z.array(z.strictObject({ glob: z.string().optional() }));
export const trustProxySchema = z.array(z.string());
