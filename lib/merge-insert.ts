/**
 * What a merge-insert must be told before it can change anything, checked alike by the console's form and the
 * server: the key columns to match rows on, and at least one action (update matched rows, insert unmatched ones,
 * or delete rows the source lacks; a condition enables its action).
 */
export interface MergeChoices {
  on: string[];
  whenMatchedUpdateAll: boolean;
  whenMatchedUpdateAllFilt?: string;
  whenNotMatchedInsertAll: boolean;
  whenNotMatchedBySourceDelete: boolean;
  whenNotMatchedBySourceDeleteFilt?: string;
}

/** Whether matched rows are updated: asked for, or a condition for it given. */
export const updatesMatched = (choices: MergeChoices) => choices.whenMatchedUpdateAll || Boolean(choices.whenMatchedUpdateAllFilt);

/** Whether rows the source lacks are deleted: asked for, or a condition for it given. */
export const deletesBySource = (choices: MergeChoices) => choices.whenNotMatchedBySourceDelete || Boolean(choices.whenNotMatchedBySourceDeleteFilt);

/** Why the merge cannot run as asked, or null when it can. */
export function mergeProblem(choices: MergeChoices): string | null {
  if (choices.on.length === 0 || choices.on.some((key) => key.length === 0)) return "'on' is required: name the key column(s) to match rows on";
  if (!updatesMatched(choices) && !choices.whenNotMatchedInsertAll && !deletesBySource(choices)) {
    return "merge_insert would change nothing: set when_matched_update_all, when_not_matched_insert_all or when_not_matched_by_source_delete (or a _filt expression)";
  }
  return null;
}
