from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join  # made by jinja2 3.1.6 from sha256 0542aa6fe59788c7477f52d99d664c42dd8834fd325f2c5cd5263f34b71e075f
name = 'uncertainty.md.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_uncertainty = resolve('uncertainty')
    try:
        t_1 = environment.filters['cell']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'cell' found.")
    try:
        t_2 = environment.filters['code']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'code' found.")
    try:
        t_3 = environment.filters['ident']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'ident' found.")
    try:
        t_4 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_5 = environment.filters['text']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'text' found.")
    pass
    if (undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty):
        pass
        yield '\n## Uncertain inputs\n\n'
        yield str(t_4(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'inputs')))
        yield ' input'
        yield str(('s' if (t_4(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'inputs')) != 1) else cond_expr_undefined("the inline if-expression on line 8 in 'uncertainty.md.j2' evaluated to false and no else section was defined.")))
        yield ' '
        yield str(('are' if (t_4(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'inputs')) != 1) else 'is'))
        yield ' known only as a range; every other part of this report uses the value as written. '
        yield str(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'samples'))
        yield ' trials ('
        yield str(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'method'))
        yield ', seed '
        yield str(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'seed'))
        yield '; `planner simulate` draws the same).\n\n| input | distribution | as written |\n|---|---|---:|\n'
        for l_1_i in environment.call(context, environment.ticking, environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'inputs')):
            _loop_vars = {}
            pass
            yield '| '
            yield str(t_1(t_5(environment.getattr(l_1_i, 'label'))))
            yield '<br><sub>'
            yield str(t_3(environment.getattr(l_1_i, 'name')))
            yield '</sub> | '
            yield str(t_1(t_5(environment.getattr(l_1_i, 'distribution'))))
            yield ' | '
            yield str(t_1(environment.getattr(l_1_i, 'point')))
            yield ' |\n'
        l_1_i = missing
        if environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'statements'):
            pass
            yield '\n'
            for l_1_s in environment.call(context, environment.ticking, environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'statements')):
                _loop_vars = {}
                pass
                yield '- '
                if environment.getattr(l_1_s, 'code'):
                    pass
                    yield str(t_2(environment.getattr(l_1_s, 'code')))
                    yield ' '
                yield str(t_5(environment.getattr(l_1_s, 'words')))
                yield '\n'
            l_1_s = missing
        if environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'figures'):
            pass
            yield '\n| figure | as written | mean | P5 | P50 | P95 |\n|---|---:|---:|---:|---:|---:|\n'
            l_1_loop = missing
            for l_1_f, l_1_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'figures')), undefined):
                _loop_vars = {}
                pass
                l_2_loop = missing
                for l_2_r, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_f, 'rows'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    yield '| '
                    if environment.getattr(l_2_loop, 'first'):
                        pass
                        yield str(t_1(t_5(environment.getattr(l_1_f, 'label'))))
                        yield '<br>'
                    yield '<sub>'
                    if environment.getattr(l_2_loop, 'first'):
                        pass
                        yield str(t_3(environment.getattr(l_1_f, 'name')))
                        if environment.getattr(l_1_f, 'unit'):
                            pass
                            yield ', '
                            yield str(t_1(environment.getattr(l_1_f, 'unit')))
                    if environment.getattr(l_2_r, 'scenario'):
                        pass
                        yield str((', ' if environment.getattr(l_2_loop, 'first') else cond_expr_undefined("the inline if-expression on line 27 in 'uncertainty.md.j2' evaluated to false and no else section was defined.")))
                        yield str(t_1(environment.getattr(l_2_r, 'scenario')))
                    yield '</sub> | '
                    yield str(t_1(environment.getattr(l_2_r, 'point')))
                    yield ' | '
                    yield str(t_1(environment.getattr(l_2_r, 'mean')))
                    yield ' | '
                    yield str(t_1(environment.getattr(l_2_r, 'p5')))
                    yield ' | '
                    yield str(t_1(environment.getattr(l_2_r, 'p50')))
                    yield ' | '
                    yield str(t_1(environment.getattr(l_2_r, 'p95')))
                    yield ' |\n'
                l_2_loop = l_2_r = missing
            l_1_loop = l_1_f = missing
        for l_1_f in environment.call(context, environment.ticking, environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'figures')):
            _loop_vars = {}
            pass
            if environment.getattr(l_1_f, 'plot'):
                pass
                yield '\n!['
                yield str(t_5(environment.getattr(l_1_f, 'label')))
                yield ': share of trials, the value as written marked]('
                yield str(environment.getattr(l_1_f, 'plot'))
                yield ')\n'
        l_1_f = missing
        if environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'tornado'):
            pass
            yield "\nWhat moves each figure most over the trials (Spearman's rank correlation with each uncertain input):\n"
            if environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'tornado_plot'):
                pass
                yield '\n![What moves each figure over the trials: a bar per uncertain input]('
                yield str(environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'tornado_plot'))
                yield ')\n'
            yield '\n'
            l_1_loop = missing
            for l_1_t, l_1_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr((undefined(name='uncertainty') if l_0_uncertainty is missing else l_0_uncertainty), 'tornado')), undefined):
                _loop_vars = {}
                pass
                yield '- '
                yield str(t_5(environment.getattr(l_1_t, 'label')))
                yield ' ('
                yield str(t_2(environment.getattr(l_1_t, 'name')))
                if environment.getattr(l_1_t, 'scenario'):
                    pass
                    yield ', '
                    yield str(t_5(environment.getattr(l_1_t, 'scenario')))
                yield '): '
                l_2_loop = missing
                for l_2_r, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_t, 'top'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    yield str(t_2(environment.getattr(l_2_r, 'input')))
                    yield ' '
                    yield str(environment.getattr(l_2_r, 'rho'))
                    yield str((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 46 in 'uncertainty.md.j2' evaluated to false and no else section was defined.")))
                l_2_loop = l_2_r = missing
                yield '.\n'
            l_1_loop = l_1_t = missing

blocks = {}
debug_info = '4=42&8=45&12=57&13=61&15=70&17=73&18=77&21=84&25=88&26=92&27=96&31=125&32=128&34=131&37=136&40=139&42=142&45=146&46=150'