// SPDX-License-Identifier: BSD-2-Clause
/*
 * SVG output: an interactive flame graph in one self-contained file (inline
 * style and script, nothing fetched), written from a frame tree (flame.h);
 * and the `stkreport -f svg` writer, which builds that tree from a report
 * with the frames folded output would print, in the same order and with
 * the same names, each tagged with its kind for the colors.
 *
 * The markup is small on purpose (a 100k-stack capture gives tens of
 * thousands of frames): one <g> per frame with its data in short
 * attributes (n name, v value, s start, b base value), a <rect> and a
 * <text> label only where one fits; one script handles every frame by
 * event delegation.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "output.h"

#define SVG_XPAD 10.0
#define SVG_FRAME_H 16.0
#define SVG_HEAD 54.0		/* title, subtitle, buttons */
#define SVG_FOOT 30.0		/* details line */
#define SVG_CHAR_W 7.0		/* 12px Verdana, average advance */

/* ---- XML text ---- */

/* Length of a well-formed UTF-8 sequence at @p (@n bytes, p[0] >= 0x80)
 * that is a character XML 1.0 allows and no C1 control; else 0. */
static size_t utf8_xml_char(const uint8_t *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* shortest form only; no surrogates, C1, U+FFFE/U+FFFF, > U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

/*
 * Append @n bytes of @s as XML character data or attribute text: the five
 * markup characters as entities; control bytes, DEL and bytes that are no
 * allowed UTF-8 character as "\xNN", the project's escape rule
 * (stk_escape.h), so the document stays well-formed whatever a name holds.
 * Names from the report are already escaped by that rule ('\' doubled), so
 * this does not escape '\' again.
 */
static int xml_add(struct strbuf *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0, len;
	int err = 0;

	while (!err && i < n) {
		const char *rep = NULL;
		char esc[5];

		if (p[i] >= 0x20 && p[i] < 0x7f) {
			switch (p[i]) {
			case '&': rep = "&amp;"; break;
			case '<': rep = "&lt;"; break;
			case '>': rep = "&gt;"; break;
			case '"': rep = "&quot;"; break;
			case '\'': rep = "&#39;"; break;
			default: i++; continue;
			}
			len = 1;
		} else if (p[i] >= 0x80 && (len = utf8_xml_char(p + i, n - i)) != 0) {
			i += len;
			continue;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[p[i] >> 4];
			esc[3] = hex[p[i] & 15];
			esc[4] = '\0';
			rep = esc;
			len = 1;
		}
		err = strbuf__add(sb, s + run, i - run);
		err = err ?: strbuf__adds(sb, rep);
		i += len;
		run = i;
	}
	return err ?: strbuf__add(sb, s + run, i - run);
}

static int xml_adds(struct strbuf *sb, const char *s)
{
	return xml_add(sb, s, strlen(s));
}

/* A px coordinate, at most two decimals, no trailing zeros. */
static int add_num(struct strbuf *sb, double v)
{
	char b[48];
	int n = snprintf(b, sizeof(b), "%.2f", v);

	if (n <= 0 || (size_t)n >= sizeof(b))
		return -EINVAL;
	while (n > 1 && b[n - 1] == '0')
		n--;
	if (b[n - 1] == '.')
		n--;
	return strbuf__add(sb, b, (size_t)n);
}

/* ---- the document ---- */

static const char svg_style[] =
"<style>\n"
"text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
"#title{font-size:17px}\n"
"#frames text{pointer-events:none}\n"
"#frames g{cursor:pointer}\n"
"#frames g:hover rect{stroke:#000;stroke-width:.5}\n"
".btn{cursor:pointer;text-decoration:underline}\n"
".h{display:none}\n"
"</style>\n";

/*
 * The frames are read back from the DOM: a frame's depth from its y, its
 * caller from document order (a frame comes before its callees), its
 * position from s and v (exact, in value units, so deep zooms stay exact).
 */
static const char svg_script[] =
"var NS='http://www.w3.org/2000/svg',F=[],Z=null,M=null;\n"
"function $(i){return document.getElementById(i);}\n"
"function fmtv(v){if(C.unit){var u=['ns','us','ms','s'],i=0;while(v>=1000&&i<3){v/=1000;i++;}"
"return (i?v.toFixed(2):v)+' '+u[i];}return v+(v==1?' sample':' samples');}\n"
"function pct(v,t){return t?(100*v/t).toFixed(2)+'%':'0%';}\n"
"function info(f){if(C.diff){var d=(C.total?100*f.v/C.total:0)-(C.btotal?100*f.b/C.btotal:0);"
"return f.n+' (base '+fmtv(f.b)+', '+pct(f.b,C.btotal)+'; new '+fmtv(f.v)+', '+pct(f.v,C.total)+"
"'; '+(d>=0?'+':'')+d.toFixed(2)+' points)';}return f.n+' ('+fmtv(f.v)+', '+pct(f.v,C.total)+')';}\n"
"function cls(f){var c=(f.h?'h ':'')+(f.m?'m':'');c=c.trim();"
"if(c)f.g.setAttribute('class',c);else f.g.removeAttribute('class');}\n"
"function label(f,x,w){var n=Math.floor((w-6)/" "7" ");if(n<3){if(f.t)f.t.textContent='';return;}"
"if(!f.t){f.t=document.createElementNS(NS,'text');f.t.setAttribute('y',+f.r.getAttribute('y')+11.5);"
"f.g.appendChild(f.t);}f.t.setAttribute('x',(x+3).toFixed(2));"
"f.t.textContent=f.n.length<=n?f.n:f.n.slice(0,n-2)+'..';}\n"
"function path(f){var p=[];for(;f&&f.d>0;f=f.p)p.unshift(f.n);return p.join(';');}\n"
"function zoom(z){Z=z;var s0=z?z.s:0,v0=z?z.v:F[0].v,d0=z?z.d:0;"
"for(var i=0;i<F.length;i++){var f=F[i],a=f.d<d0,x,w;"
"f.h=a?!(f.s<=s0&&f.s+f.v>=s0+v0):!(f.s>=s0&&f.s+f.v<=s0+v0);cls(f);if(f.h)continue;"
"x=a?C.P:C.P+(f.s-s0)/v0*C.W;w=a?C.W:f.v/v0*C.W;"
"f.r.setAttribute('x',x.toFixed(2));f.r.setAttribute('width',w.toFixed(2));label(f,x,w);}"
"$('reset').setAttribute('class',z?'btn':'btn h');"
"document.documentElement.setAttribute('data-zoom',z?path(z):'');}\n"
"function search(t){M=t;var re=null,sum=0;if(t!==null){try{re=new RegExp(t);}catch(e){re=null;}}"
"for(var i=0;i<F.length;i++){var f=F[i];f.m=t!==null&&f.d>0&&(re?re.test(f.n):f.n.indexOf(t)>=0);"
"f.r.setAttribute('fill',f.m?'#e600e6':f.fill);cls(f);"
"if(f.m){for(var a=f.p;a&&!a.m;a=a.p);if(!a)sum+=f.v;}}"
"var s=t===null?'':pct(sum,C.total);$('matched').textContent=t===null?' ':'Matched: '+s;"
"$('search').textContent=t===null?'Search':'Clear search';"
"document.documentElement.setAttribute('data-matched',s);}\n"
"function frag(){var h=location.hash.slice(1).split('&'),s=null,z=null;"
"for(var i=0;i<h.length;i++){var k=h[i].split('=')[0],v;"
"try{v=decodeURIComponent(h[i].slice(k.length+1));}catch(e){continue;}"
"if(k=='search'&&v)s=v;else if(k=='zoom'&&v){for(var j=1;j<F.length;j++)"
"if(F[j].n==v.split(';').pop()&&path(F[j])==v){z=F[j];break;}}}zoom(z);search(s);}\n"
"function hit(e){var g=e.target,fr=$('frames');while(g&&g.parentNode!==fr)g=g.parentNode;"
"return g&&g.parentNode===fr?F[g.fi]:null;}\n"
"function init(){var gs=$('frames').children,st=[];"
"for(var i=0;i<gs.length;i++){var g=gs[i],r=g.firstElementChild,y=+r.getAttribute('y'),"
"d=Math.round(C.inv?(y-C.T)/C.FH:(C.B-y)/C.FH),"
"f={g:g,r:r,t:r.nextElementSibling,n:g.getAttribute('n'),v:+g.getAttribute('v'),"
"s:+g.getAttribute('s'),b:+(g.getAttribute('b')||0),d:d,fill:r.getAttribute('fill')};"
"f.p=d?st[d-1]:null;st[d]=f;g.fi=F.length;F.push(f);}\n"
"var fr=$('frames');"
"fr.addEventListener('mouseover',function(e){var f=hit(e);if(f)$('details').textContent=info(f);});"
"fr.addEventListener('mouseout',function(){$('details').textContent=' ';});"
"fr.addEventListener('click',function(e){var f=hit(e);if(f)zoom(f.d?f:null);});"
"$('reset').addEventListener('click',function(){zoom(null);});"
"$('search').addEventListener('click',function(){if(M!==null)search(null);"
"else{var t=prompt('Search (regular expression or text)','');if(t)search(t);}});"
"window.addEventListener('hashchange',frag);frag();}\n"
"init();\n";

static const char *default_title(const struct flame_opts *fo)
{
	if (fo->flags & FLAME_DIFF)
		return "Differential Flame Graph";
	return fo->palette == FLAME_PALETTE_OFFCPU ? "Off-CPU Time Flame Graph" : "Flame Graph";
}

static int write_frame(struct strbuf *sb, struct flame *f, const struct flame_rect *r,
		       int diff)
{
	char color[8];
	size_t fit, cut;
	double x = SVG_XPAD + r->x;
	int err;

	flame__color(f, r, color);
	err = strbuf__adds(sb, "<g n=\"");
	err = err ?: xml_add(sb, r->name, r->len);
	err = err ?: strbuf__addf(sb, "\" v=\"%llu\" s=\"%llu\"", (unsigned long long)r->value,
				  (unsigned long long)r->start);
	if (!err && diff)
		err = strbuf__addf(sb, " b=\"%llu\"", (unsigned long long)r->base);
	err = err ?: strbuf__adds(sb, "><rect x=\"");
	err = err ?: add_num(sb, x);
	err = err ?: strbuf__adds(sb, "\" y=\"");
	err = err ?: add_num(sb, r->y);
	err = err ?: strbuf__adds(sb, "\" width=\"");
	err = err ?: add_num(sb, r->width);
	err = err ?: strbuf__addf(sb, "\" height=\"%g\" fill=\"%s\"/>", SVG_FRAME_H - 1, color);
	if (err)
		return err;
	fit = r->width > 6 ? (size_t)((r->width - 6) / SVG_CHAR_W) : 0;
	if (fit >= 3) {
		err = strbuf__adds(sb, "<text x=\"");
		err = err ?: add_num(sb, x + 3);
		err = err ?: strbuf__adds(sb, "\" y=\"");
		err = err ?: add_num(sb, r->y + 11.5);
		err = err ?: strbuf__adds(sb, "\">");
		if (r->len <= fit) {
			err = err ?: xml_add(sb, r->name, r->len);
		} else {
			/* cut on a character boundary */
			cut = fit - 2;
			while (cut && ((unsigned char)r->name[cut] & 0xc0) == 0x80)
				cut--;
			err = err ?: xml_add(sb, r->name, cut);
			err = err ?: strbuf__adds(sb, "..");
		}
		err = err ?: strbuf__adds(sb, "</text>");
	}
	return err ?: strbuf__adds(sb, "</g>\n");
}

int flame__write_svg(struct flame *f, const struct flame_svg_opts *o, FILE *out)
{
	const struct flame_opts *fo = flame__opts(f);
	struct flame_layout_opts lo = { .sz = sizeof(lo), .frame_height = SVG_FRAME_H };
	struct strbuf sb = { 0 };
	double width, height, min_width;
	uint32_t levels;
	size_t i, merged;
	int err, diff = fo->flags & FLAME_DIFF;

	if (!o || o->sz < sizeof(*o) || o->width < 0 || o->min_width < 0)
		return -EINVAL;
	width = o->width > 0 ? o->width : 1200;
	min_width = o->min_width > 0 ? o->min_width : 0.1;
	if (width <= 2 * SVG_XPAD + 1)
		return -EINVAL;
	lo.width = width - 2 * SVG_XPAD;
	lo.min_width = min_width;
	lo.inverted = o->inverted;
	/* The height depends on the depth drawn: lay out once to learn it,
	 * then again with the real y of the levels (cheap next to writing). */
	lo.top = SVG_HEAD;
	lo.bottom = SVG_HEAD;
	err = flame__layout(f, &lo);
	if (err)
		return err;
	levels = flame__max_depth(f) + 1;
	height = SVG_HEAD + levels * SVG_FRAME_H + SVG_FOOT;
	lo.bottom = SVG_HEAD + (levels - 1) * SVG_FRAME_H;
	err = flame__layout(f, &lo);
	if (err)
		return err;
	merged = flame__nr_merged(f);

	err = strbuf__adds(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	err = err ?: strbuf__addf(&sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
				  "width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\">\n",
				  width, height, width, height);
	err = err ?: strbuf__adds(&sb, svg_style);
	err = err ?: strbuf__addf(&sb, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n",
				  fo->palette == FLAME_PALETTE_OFFCPU && !diff ? "#f4f6fc" : "#fcfaf4");
	err = err ?: strbuf__addf(&sb, "<text id=\"title\" x=\"%g\" y=\"24\" text-anchor=\"middle\">",
				  width / 2);
	err = err ?: xml_adds(&sb, o->title ? o->title : default_title(fo));
	err = err ?: strbuf__adds(&sb, "</text>\n");
	if (!err && (o->subtitle || merged)) {
		err = strbuf__addf(&sb, "<text id=\"subtitle\" x=\"%g\" y=\"42\" text-anchor=\"middle\">",
				   width / 2);
		if (!err && o->subtitle)
			err = xml_adds(&sb, o->subtitle);
		if (!err && o->subtitle && merged)
			err = strbuf__adds(&sb, "; ");
		if (!err && merged)
			err = strbuf__addf(&sb, "%zu frame%s narrower than %g px merged into %s callers",
					   merged, merged == 1 ? "" : "s", min_width,
					   merged == 1 ? "its" : "their");
		err = err ?: strbuf__adds(&sb, "</text>\n");
	}
	err = err ?: strbuf__addf(&sb, "<text id=\"reset\" class=\"btn h\" x=\"%g\" y=\"24\">Reset Zoom</text>\n",
				  SVG_XPAD);
	err = err ?: strbuf__addf(&sb, "<text id=\"search\" class=\"btn\" x=\"%g\" y=\"24\" text-anchor=\"end\">Search</text>\n",
				  width - SVG_XPAD);
	err = err ?: strbuf__addf(&sb, "<text id=\"details\" x=\"%g\" y=\"%g\"> </text>\n",
				  SVG_XPAD, height - 10);
	err = err ?: strbuf__addf(&sb, "<text id=\"matched\" x=\"%g\" y=\"%g\" text-anchor=\"end\"> </text>\n",
				  width - SVG_XPAD, height - 10);
	err = err ?: strbuf__adds(&sb, "<g id=\"frames\">\n");
	if (err)
		goto out;
	for (i = 0; i < flame__nr_rects(f); i++) {
		err = write_frame(&sb, f, flame__rect(f, i), diff);
		if (err)
			goto out;
		if (sb.len >= 1 << 16) {
			if (fwrite(sb.buf, 1, sb.len, out) != sb.len) {
				err = -EIO;
				goto out;
			}
			strbuf__reset(&sb);
		}
	}
	err = strbuf__adds(&sb, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	err = err ?: strbuf__addf(&sb, "var C={W:%g,P:%g,FH:%g,T:%g,B:%g,inv:%d,unit:%d,diff:%d,"
				  "total:%llu,btotal:%llu};\n",
				  lo.width, SVG_XPAD, SVG_FRAME_H, lo.top, lo.bottom, o->inverted ? 1 : 0,
				  fo->unit == FLAME_NSEC, diff ? 1 : 0,
				  (unsigned long long)flame__total(f),
				  (unsigned long long)flame__base_total(f));
	err = err ?: strbuf__adds(&sb, svg_script);
	err = err ?: strbuf__adds(&sb, "]]></script>\n</svg>\n");
	if (err)
		goto out;
	if (fwrite(sb.buf, 1, sb.len, out) != sb.len || fflush(out) || ferror(out))
		err = -EIO;
out:
	strbuf__free(&sb);
	return err;
}

/* ---- stkreport -f svg: the report's stacks as folded output has them ---- */

struct collect {
	struct strbuf text;		/* the names, back to back */
	struct span { size_t off, len; unsigned int kind; } *spans;
	size_t n, cap;
	struct flame_frame *frames;
	size_t frames_cap;
	uint32_t max_depth;		/* META max_stack_depth, 0: unknown */
};

/* The text appended since @at is one frame of @kind. */
static int collect__mark(struct collect *c, size_t at, unsigned int kind)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct span *p = realloc(c->spans, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->spans = p;
		c->cap = cap;
	}
	c->spans[c->n++] = (struct span){ at, c->text.len - at, kind };
	return 0;
}

static int collect__adds(struct collect *c, const char *s, unsigned int kind)
{
	size_t at = c->text.len;

	return strbuf__adds(&c->text, s) ?: collect__mark(c, at, kind);
}

static int collect__comm(struct collect *c, const char *comm, unsigned int kind)
{
	size_t at = c->text.len;

	return render_clean(&c->text, comm, 1) ?: collect__mark(c, at, kind);
}

/* Every frame line of @st, root first when @root_first (else leaf first),
 * named as render_frames() names them for folded output; a stack as deep
 * as the recorder takes gets a [truncated] marker on its root side. */
static int collect__stack(struct collect *c, const struct rstack *st, int root_first,
			  const struct output_opts *o, unsigned int waker)
{
	/* max_stack_depth counts native frames (SPEC.md, STCK). */
	int truncated = st && c->max_depth && st->nr_native >= c->max_depth;
	uint32_t i, j, n;
	int err = 0;

	if (!st)
		return 0;
	if (truncated && root_first)
		err = collect__adds(c, "[truncated]", FLAME_MARKER | waker);
	for (i = 0; !err && i < st->nr_frames; i++) {
		const struct rframe *f = &st->frames[root_first ? st->nr_frames - 1 - i : i];

		n = rframe__nr_lines(f);
		for (j = 0; !err && j < n; j++) {
			uint32_t line = root_first ? n - 1 - j : j;
			size_t at = c->text.len;
			unsigned int kind;

			if (!rframe__sym(f))
				kind = FLAME_MARKER;
			else if (rframe__kind(f) == RFRAME_PYTHON)
				kind = FLAME_PYTHON;
			else if (line + 1 < n)
				kind = FLAME_INLINED;
			else
				kind = rframe__kind(f) == RFRAME_KERNEL ? FLAME_KERNEL : FLAME_USER;
			err = render_frame_line(&c->text, f, line, o, 1);
			err = err ?: collect__mark(c, at, kind | waker);
		}
	}
	if (!err && truncated && !root_first)
		err = collect__adds(c, "[truncated]", FLAME_MARKER | waker);
	return err;
}

/* folded_profile() of out_folded.c, frame by frame. */
static int collect_profile(struct collect *c, const struct rsample *s, const struct output_opts *o)
{
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const struct rtask *t = &s->task;
	int err;

	err = collect__comm(c, t->comm, FLAME_COMM);
	if (!err && !o->kernel_only && stack_missed(t->user_ref, t->user))
		err = collect__adds(c, "[Missed User Stack]", FLAME_MARKER);
	else if (!err)
		err = collect__stack(c, t->user, 1, o, 0);
	if (!err && need_delim && t->kernel_ref >= 0 && t->user_ref >= 0)
		err = collect__adds(c, "-", FLAME_MARKER);
	if (!err && !o->user_only && stack_missed(t->kernel_ref, t->kernel))
		err = collect__adds(c, "[Missed Kernel Stack]", FLAME_MARKER);
	else if (!err)
		err = collect__stack(c, t->kernel, 1, o, 0);
	return err;
}

/* folded_offwake(): target root..leaf, "--", waker leaf..root, waker comm:
 * the waker's stack stands on the "--" frame, as in offwaketime's graphs. */
static int collect_offwake(struct collect *c, const struct rsample *s, const struct output_opts *o)
{
	const struct rtask *w = s->waker, *t = &s->task;
	int need_delim = o->delimited && !(o->user_only || o->kernel_only);
	const unsigned int W = FLAME_WAKER;
	int err;

	err = collect__comm(c, t->comm, FLAME_COMM);
	if (!err && !o->kernel_only) {
		if (stack_missed(t->user_ref, t->user)) {
			size_t at = c->text.len;

			err = strbuf__addf(&c->text, "[Missed User Stack] %lld", (long long)t->user_ref);
			err = err ?: collect__mark(c, at, FLAME_MARKER);
		} else {
			err = collect__stack(c, t->user, 1, o, 0);
		}
	}
	if (!err && !o->user_only) {
		if (need_delim && t->kernel && t->user)
			err = collect__adds(c, "-", FLAME_MARKER);
		if (!err && stack_missed(t->kernel_ref, t->kernel))
			err = collect__adds(c, "[Missed Kernel Stack]", FLAME_MARKER);
		else if (!err)
			err = collect__stack(c, t->kernel, 1, o, 0);
	}
	err = err ?: collect__adds(c, "--", FLAME_MARKER);
	if (!err && rtask__none(w))
		return collect__adds(c, NO_WAKER_FRAME, FLAME_MARKER | W);
	if (!err && !o->user_only) {
		if (stack_missed(w->kernel_ref, w->kernel))
			err = collect__adds(c, "[Missed Kernel Stack]", FLAME_MARKER | W);
		else
			err = collect__stack(c, w->kernel, 0, o, W);
	}
	if (!err && !o->kernel_only) {
		if (need_delim && w->user && w->kernel)
			err = collect__adds(c, "-", FLAME_MARKER | W);
		if (!err && stack_missed(w->user_ref, w->user))
			err = collect__adds(c, "[Missed User Stack]", FLAME_MARKER | W);
		else if (!err)
			err = collect__stack(c, w->user, 0, o, W);
	}
	err = err ?: collect__comm(c, w->comm, FLAME_COMM | W);
	return err;
}

/* The collected spans as flame frames (the text no longer moves). */
static int collect__frames(struct collect *c)
{
	size_t i;

	if (c->n > c->frames_cap) {
		struct flame_frame *p = realloc(c->frames, c->cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->frames = p;
		c->frames_cap = c->cap;
	}
	for (i = 0; i < c->n; i++)
		c->frames[i] = (struct flame_frame){ c->text.buf + c->spans[i].off, c->spans[i].len,
						     c->spans[i].kind };
	return 0;
}

int out_svg__write(const struct report *r, const struct output_opts *o, FILE *f)
{
	struct flame_opts fo = { .sz = sizeof(fo) };
	struct flame_svg_opts so = { .sz = sizeof(so), .title = o->title, .inverted = o->inverted };
	struct collect c = { 0 };
	struct flame *fl;
	const char *depth;
	size_t i;
	int err = 0;

	if (r->kind != REPORT_PROFILE) {
		fo.unit = FLAME_NSEC;
		fo.palette = FLAME_PALETTE_OFFCPU;
		if (r->kind == REPORT_OFFWAKE && !o->title)
			so.title = "Off-Wake Time Flame Graph";
	}
	depth = capture__meta(r->cap, "max_stack_depth");
	c.max_depth = depth ? (uint32_t)strtoul(depth, NULL, 10) : 0;
	fl = flame__new(&fo);
	if (!fl)
		return -ENOMEM;
	for (i = 0; !err && i < r->nr_samples; i++) {
		const struct rsample *s = &r->samples[i];

		strbuf__reset(&c.text);
		c.n = 0;
		if (r->kind == REPORT_OFFWAKE)
			err = collect_offwake(&c, s, o);
		else
			err = collect_profile(&c, s, o);
		err = err ?: collect__frames(&c);
		err = err ?: flame__add(fl, c.frames, c.n, sample_value(r, s));
	}
	err = err ?: flame__write_svg(fl, &so, f);
	flame__free(fl);
	strbuf__free(&c.text);
	free(c.spans);
	free(c.frames);
	return err;
}
