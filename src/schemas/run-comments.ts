import * as z from "zod";

/**
 * Comments on a run: `POST /runs/:id/comments` stores one, as HCP Terraform's Comments API
 * does (type `comments`, id `wsc-`, attribute `body`). Integrations that summarise a run write them
 * with an API token.
 */

/**
 * A body as long as a GitHub comment (65,536 characters), and a bounded list per run so the run's
 * event list, which names every comment and is not paged (go-tfe `RunEventList`), stays bounded (D26).
 */
export const COMMENT_LIMITS = { bodyChars: 65_536, perRun: 1_000 } as const;

/** `data.attributes` of a comment create; go-tfe refuses an empty body client-side, runplane a blank one. */
export const CommentCreateSchema = z.object({
  body: z
    .string()
    .max(COMMENT_LIMITS.bodyChars)
    .refine((body) => body.trim() !== "", "can't be blank"),
});
export type CommentCreate = z.infer<typeof CommentCreateSchema>;

/** A stored comment. Immutable once stored. */
export interface CommentRecord {
  /** `wsc-<16 base62>` (D9). */
  id: string;
  runId: string;
  /** The run's workspace and organization, copied so a read authorizes without loading the run. */
  workspaceId: string;
  organization: string;
  body: string;
  /** The user whose token wrote it; null for a team or organization token. */
  authorId: string | null;
  createdAt: string;
}
