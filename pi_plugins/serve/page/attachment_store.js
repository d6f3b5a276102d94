/* The files the user attached in this page, per session, for javascript_repl's
 * listAttachments(), readTextAttachment(id) and readBinaryAttachment(id) (pi web-ui's
 * attachments runtime): so the model's code can read a workbook or a PDF whose bytes
 * never went to the model. Kept in the page's memory only: a reload forgets them. */

const bySession = new Map(); // session id -> [{id, fileName, mimeType, size, base64}]
let next = 1;

/** Keep ``records`` ({fileName, mimeType, size, base64}) for ``sessionId``; each gets an id. */
export function keepAttachments(sessionId, records) {
  if (!sessionId) return [];
  const list = bySession.get(sessionId) || [];
  const kept = records.map((record) => ({ id: `attachment-${next++}`, ...record }));
  list.push(...kept);
  bySession.set(sessionId, list);
  return kept;
}

/** What the user attached in ``sessionId`` so far, oldest first. */
export function attachmentsOf(sessionId) {
  return bySession.get(sessionId) || [];
}
