/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suspects_html.c - the leak suspects as one self-contained HTML page: no network, the
 * style, the script and the data inline. The data are the JSON report (the same bytes
 * as --format json), the chains by retained size (a flat list, for the icicle) and the
 * goroutine groups (heapref goroutines' tsv); the script draws from them the suspects
 * with each path as a graph, the icicle and the table of goroutine groups, and marks
 * each drawn element with its numbers (data-*) for a test in a real browser to compare
 * with the JSON.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "heapref/writers.h"
#include "writers_internal.h"

#define ICICLE_DEPTH 6         /* levels of chains drawn */
#define ICICLE_MIN_SHARE 0.002 /* a chain under this share of the total is not drawn */

static const char page_style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:32px}"
	".suspect{border:1px solid #ccc;border-radius:6px;padding:12px 16px;margin:16px 0}"
	".suspect h3{margin:0 0 8px 0;font-size:16px}"
	".num{font-variant-numeric:tabular-nums}"
	"table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;"
	"border-bottom:1px solid #eee}td.r,th.r{text-align:right}"
	".path text{font:12px monospace}.field{fill:#a33}"
	"#icicle text{font:11px sans-serif;pointer-events:none}"
	".muted{color:#777}";

/* The script: everything drawn from the data elements, nothing fetched. */
static const char page_script[] =
	"'use strict';\n"
	"const R=JSON.parse(document.getElementById('report').textContent);\n"
	"const C=JSON.parse(document.getElementById('chains').textContent);\n"
	"const G=JSON.parse(document.getElementById('goroutines').textContent);\n"
	"const NS='http://www.w3.org/2000/svg';\n"
	"function el(tag,attrs,text){const e=document.createElement(tag);"
	"for(const k in attrs||{})e.setAttribute(k,attrs[k]);if(text!==undefined)"
	"e.textContent=text;return e;}\n"
	"function sv(tag,attrs,text){const e=document.createElementNS(NS,tag);"
	"for(const k in attrs||{})e.setAttribute(k,attrs[k]);if(text!==undefined)"
	"e.textContent=text;return e;}\n"
	"function num(n){return String(n).replace(/\\B(?=(\\d{3})+(?!\\d))/g,',');}\n"
	"function size(b){const u=['B','KiB','MiB','GiB','TiB'];let i=0;let v=b;"
	"while(v>=1024&&i<u.length-1){v/=1024;i++;}return (i?v.toFixed(1):v)+' '+u[i];}\n"
	"function pathGraph(s){const w=760,h=50,gap=30;const n=s.path.length;"
	"const g=sv('svg',{class:'path',width:w,height:n*(h+gap)-gap+2});"
	"s.path.forEach((p,i)=>{const y=i*(h+gap);"
	"g.appendChild(sv('rect',{x:1,y:y+1,width:w-2,height:h,rx:6,fill:i?'#eef3fb':'#fdf3e0',"
	"stroke:'#89a'}));"
	"g.appendChild(sv('text',{x:12,y:y+20},p.type));"
	"g.appendChild(sv('text',{x:12,y:y+38,class:'muted'},i?(p.address+'  '+num(p.size)+' bytes')"
	":'root'));"
	"if(i+1<n){const a=y+h;g.appendChild(sv('line',{x1:40,y1:a,x2:40,y2:a+gap,stroke:'#555',"
	"'stroke-width':1.5}));g.appendChild(sv('polygon',{points:'35,'+(a+gap-7)+' 45,'+"
	"(a+gap-7)+' 40,'+(a+gap),fill:'#555'}));"
	"g.appendChild(sv('text',{x:52,y:a+gap/2+4,class:'field'},s.path[i+1].field||'points to'));}"
	"});return g;}\n"
	"function suspect(s){const p=s.accumulation_point;"
	"const d=el('section',{class:'suspect','data-rank':s.rank,'data-bytes':s.bytes,"
	"'data-objects':s.objects,'data-point-count':p.count,'data-point-kind':p.kind,"
	"'data-roots':s.roots.join(' ')});"
	"const who=s.kind==='goroutines'?'leaked goroutines created by '+s.roots[0]:"
	"(s.kind==='shared'?'memory shared by ':'')+s.roots.join(s.roots.length>2?', ':' and ')"
	"+(s.more_roots?' and others':'');"
	"d.appendChild(el('h3',{},'Suspect '+s.rank+': '+who));"
	"d.appendChild(el('p',{class:'num'},'retains '+num(s.bytes)+' bytes ('+size(s.bytes)+', '+"
	"s.percent.toFixed(1)+'% of the reachable heap) in '+num(s.objects)+' object'+(s.objects===1?'':'s')));"
	"if(s.goroutine&&s.kind!=='goroutines')d.appendChild(el('p',{},'a frame variable of "
	"goroutine '+s.goroutine.id+' (created by '+s.goroutine.creator+'; '+"
	"s.goroutine.goroutines+' goroutines run this function'+(s.goroutine.leaked?', '+"
	"s.goroutine.leaked+' of them leaked':'')+')'));"
	"d.appendChild(el('p',{},'piles up in '+p.what+(p.address!=='0x0'?' at '+p.address:'')+"
	"', which retains '+num(p.bytes)+' bytes in '+num(p.objects)+' objects'));"
	"if(s.path.length){d.appendChild(el('h4',{},'Path from the root'));"
	"d.appendChild(pathGraph(s));}"
	"if(s.kind==='goroutines')return d;"
	"d.appendChild(el('h4',{},'What piled up, by type'));const t=el('table');"
	"t.appendChild(el('tr')).append(el('th',{class:'r'},'bytes'),el('th',{class:'r'},'objects'),"
	"el('th',{},'type'));"
	"for(const r of s.types){const tr=el('tr',{'data-type':r.type,'data-bytes':r.bytes,"
	"'data-objects':r.objects});tr.append(el('td',{class:'r num'},num(r.bytes)),"
	"el('td',{class:'r num'},num(r.objects)),el('td',{},r.type));t.appendChild(tr);}"
	"d.appendChild(t);"
	"if(s.examples.length)d.appendChild(el('p',{class:'muted'},'examples: heapref why '+R.binary+"
	"' '+R.heap+' '+s.examples.join(' ')));return d;}\n"
	"function icicle(){const box=document.getElementById('icicle');const w=1100,h=22;"
	"const kids={};for(const c of C.nodes)(kids[c.p]=kids[c.p]||[]).push(c);"
	"const total=C.total||1;let depth=0;const svg=sv('svg',{});"
	"function lay(p,x,d){let at=x;for(const c of (kids[p]||[])){const cw=w*c.b/total;"
	"depth=Math.max(depth,d+1);const r=sv('rect',{x:at,y:d*h,width:Math.max(cw-1,0.5),"
	"height:h-1,fill:'hsl('+(d*47%360)+',55%,'+(78-d*3)+'%)','data-chain-bytes':c.b});"
	"r.appendChild(sv('title',{},c.n+': '+num(c.b)+' bytes, '+num(c.o)+' objects'));"
	"svg.appendChild(r);if(cw>60)svg.appendChild(sv('text',{x:at+4,y:d*h+15},"
	"c.n.length*6.5>cw-8?c.n.slice(0,Math.floor((cw-8)/6.5))+'\\u2026':c.n));"
	"lay(c.id,at,d+1);at+=cw;}}"
	"lay(0,0,0);svg.setAttribute('viewBox','0 0 '+w+' '+depth*h);svg.setAttribute('width','100%');"
	"box.appendChild(svg);}\n"
	"function goroutines(){const lines=G.split('\\n').filter(l=>l.length);"
	"const t=document.getElementById('goroutine-groups');if(!lines.length){"
	"t.appendChild(el('tr')).appendChild(el('td',{},'no goroutines'));return;}"
	"const head=lines[0].split('\\t');const keep=['count','leaked','status','created_by',"
	"'bytes','retained_bytes','stack_bytes'].filter(k=>head.includes(k));"
	"const tr=el('tr');for(const k of keep)tr.appendChild(el('th',{},k));t.appendChild(tr);"
	"for(const l of lines.slice(1)){const f=l.split('\\t');const row=el('tr',"
	"{'data-count':f[head.indexOf('count')]});for(const k of keep)row.appendChild(el('td',"
	"{},f[head.indexOf(k)]));t.appendChild(row);}}\n"
	"document.getElementById('summary').textContent='reachable: '+num(R.reachable.bytes)+"
	"' bytes ('+size(R.reachable.bytes)+') in '+num(R.reachable.objects)+' objects; threshold '"
	"+R.threshold.percent+'% ('+num(R.threshold.bytes)+' bytes); '+R.suspects.length+"
	"' suspect'+(R.suspects.length===1?'':'s');\n"
	"const list=document.getElementById('suspects');"
	"if(!R.suspects.length)list.appendChild(el('p',{},'No suspect: no root variable, and no "
	"group of roots sharing memory, retains '+R.threshold.percent+'% of the reachable heap or "
	"more.'));\n"
	"for(const s of R.suspects)list.appendChild(suspect(s));\n"
	"function growth(){const box=document.getElementById('growth');if(!R.growth){"
	"box.appendChild(el('p',{class:'muted'},'No baseline: heapref suspects --baseline "
	"OLD_BINARY OLD_DUMP shows what grew.'));return;}"
	"if(!R.growth.length){box.appendChild(el('p',{},'No root grew since the baseline.'));"
	"return;}const t=el('table');t.appendChild(el('tr')).append(el('th',{class:'r'},'bytes'),"
	"el('th',{class:'r'},'objects'),el('th',{class:'r'},'now'),el('th',{},'root'),"
	"el('th',{},'where it piles up'));for(const g of R.growth){const tr=el('tr',"
	"{'data-growth-root':g.root,'data-bytes':g.bytes});tr.append(el('td',{class:'r num'},"
	"(g.bytes>0?'+':'')+num(g.bytes)),el('td',{class:'r num'},(g.objects>0?'+':'')+"
	"num(g.objects)),el('td',{class:'r num'},num(g.new_bytes)),el('td',{},g.root),"
	"el('td',{},g.chain));t.appendChild(tr);}box.appendChild(t);}\n"
	"icicle();goroutines();growth();\n"
	"document.body.dataset.rendered='ok';\n";

/* The chain tree's nodes worth drawing, parents first: {id, p, n, b, o} each. */
static void write_chain_nodes(FILE *out, const struct hr_chains *tree)
{
	size_t n = tree ? hr_chains_count(tree) : 0;
	struct chain_value *v = n ? calloc(n, sizeof(*v)) : NULL;
	uint64_t min;
	bool first = true;

	if (!v) {
		fputs("{\"total\":0,\"nodes\":[]}", out);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		v[i].bytes = hr_chains_node(tree, (uint32_t)i)->bytes;
		v[i].objects = hr_chains_node(tree, (uint32_t)i)->objects;
	}
	chain_values_sum_up(tree, n, v);
	min = (uint64_t)((double)v[0].bytes * ICICLE_MIN_SHARE);
	fprintf(out, "{\"total\":%" PRIu64 ",\"nodes\":[", v[0].bytes);
	for (size_t i = 1; i < n; i++) { /* a child after its parent, so parents come first */
		const struct hr_chain_node *c = hr_chains_node(tree, (uint32_t)i);

		if (c->depth > ICICLE_DEPTH || v[i].bytes < min || !v[i].bytes)
			continue;
		fprintf(out, "%s\n{\"id\":%zu,\"p\":%" PRIu32 ",\"n\":", first ? "" : ",", i, c->parent);
		json_string(out, hr_chains_name(tree, c->name));
		fprintf(out, ",\"b\":%" PRIu64 ",\"o\":%" PRIu64 "}", v[i].bytes, v[i].objects);
		first = false;
	}
	fputs("]}", out);
	free(v);
}

void write_suspects_html(FILE *out, const struct hr_suspects *s,
			 const struct hr_suspects_options *opt)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>heapref suspects</title>\n<style>", out);
	fputs(page_style, out);
	fputs("</style></head>\n<body>\n<h1>Leak suspects</h1>\n<p id=\"summary\" class=\"num\"></p>\n"
	      "<div id=\"suspects\"></div>\n"
	      "<h2>Retained size by chain</h2>\n<p class=\"muted\">Each chain under the one that "
	      "retains it (heapref analyze --attribution dominator); width is bytes retained.</p>\n"
	      "<div id=\"icicle\"></div>\n"
	      "<h2>Grew most since the baseline</h2>\n<div id=\"growth\"></div>\n"
	      "<h2>Goroutine groups</h2>\n<table id=\"goroutine-groups\"></table>\n"
	      "<script type=\"application/json\" id=\"report\">", out);
	write_suspects_json(out, s, opt->binary, opt->dump);
	fputs("</script>\n<script type=\"application/json\" id=\"chains\">", out);
	write_chain_nodes(out, opt->chains);
	fputs("</script>\n<script type=\"application/json\" id=\"goroutines\">", out);
	json_string(out, opt->goroutines_tsv);
	fputs("</script>\n<script>\n", out);
	fputs(page_script, out);
	fputs("</script>\n</body></html>\n", out);
}
