/* html.h - how ccasim's HTML pages (`plot -o page.html`, `view`) take
 * text, data and code: one escaping routine for each context and one
 * Content-Security-Policy, shared by every page writer (doc/hardening.md,
 * "Pages").
 *
 * A page is a single offline file: its head (charset, the policy, the
 * title and one inline <style>), then the writer's body with its data
 * blocks (<script type="application/json">, never executed) and one
 * inline <script> at the end.  The policy allows exactly the page's own
 * style and script (by their SHA-256), so that nothing a trace string
 * might smuggle into the page can run even if an escape were missed.
 */
#ifndef CCA_HTML_H
#define CCA_HTML_H

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* What a page writer hands cca_html_put_head() and
 * cca_html_put_script_and_end(): its title and its code (constant text
 * of ccasim's own, never built from input). */
typedef struct {
	const char *title;  /* the <title>, any text (escaped here); NULL: "ccasim" */
	const char *style;  /* the one inline <style> block, CSS */
	const char *script; /* the one inline <script> block, JavaScript */
} CcaHtmlPage;

/* Returns a new string (g_free): S as HTML text or a quoted attribute
 * value (or XML text, as in an SVG): '&', '<', '>', '"' and '\'' become
 * character references; bytes that are not UTF-8 and C0 controls other
 * than tab, CR and LF (not XML) become U+FFFD.  NULL gives "". */
char *cca_html_escape(const char *s);

/* Writes S to F as cca_html_escape() makes it. */
void cca_html_put_text(FILE *f, const char *s);

/* Returns a new string (g_free): JSON text (as jansson writes it) made
 * safe inside any <script> element: '<', '>' and '&' are written as
 * \u003c, \u003e and \u0026, and U+2028 and U+2029 (raw, they end a line
 * in older JavaScript) as \u2028 and \u2029, so that the result never
 * holds "</script", "<!--" or "-->" and parses back to the same value.
 * Those characters can only stand inside JSON strings, where the escapes
 * mean the same.  NULL gives "null". */
char *cca_html_script_json(const char *json);

/* Returns a new string (g_free): the CSP source expression of the inline
 * block TEXT ("'sha256-BASE64'"), the hash of its bytes as written
 * between the tags. */
char *cca_html_hash(const char *text);

/* Returns a new string (g_free): the Content-Security-Policy of PAGE:
 * nothing from anywhere (default-src 'none', base-uri and form-action
 * 'none') but PAGE's own script and style by hash, style attributes (the
 * scripts colour table cells; CSS cannot run code), data: images and
 * data: fetches (the view decodes its data through fetch()). */
char *cca_html_policy(const CcaHtmlPage *page);

/* Writes the start of PAGE to F: the doctype, <html>, and its <head> with
 * the charset, the policy (cca_html_policy()), the escaped title and
 * PAGE's style, then "<body>\n".  PAGE's style and script are ccasim's
 * own code: they must hold no "</style" or "</script" and no "<!--"
 * (asserted). */
void cca_html_put_head(FILE *f, const CcaHtmlPage *page);

/* Writes the opening tag of a data block to F: <script type="TYPE"
 * id="ID"> (TYPE is not JavaScript's, so the browser never runs it).
 * TYPE and ID are ccasim's own constants.  What follows must be safe in a
 * script element (cca_html_script_json(), or base64), then
 * cca_html_put_data_end(). */
void cca_html_put_data_start(FILE *f, const char *type, const char *id);

/* Ends the data block cca_html_put_data_start() opened. */
void cca_html_put_data_end(FILE *f);

/* Writes JSON to F as an application/json data block named ID, made safe
 * by cca_html_script_json(). */
void cca_html_put_json(FILE *f, const char *id, const char *json);

/* Writes PAGE's script to F as the one inline <script> (the bytes its
 * hash covers), then the end of the body and of the page. */
void cca_html_put_script_and_end(FILE *f, const CcaHtmlPage *page);

G_END_DECLS

#endif
