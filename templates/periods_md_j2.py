from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join  # made by jinja2 3.1.6 from sha256 f3dffa0c842d3f37a8565e14a50bd700b0b4aa43ff29dc1b4e4c7d521b404814
name = 'periods.md.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_periods = resolve('periods')
    l_0_file = resolve('file')
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
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_4 = environment.filters['text']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'text' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    if ((undefined(name='periods') if l_0_periods is missing else l_0_periods) and environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'series')):
        pass
        yield '\n## Over the '
        yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'unit'))
        yield 's\n\nThe plan runs over '
        yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'span'))
        yield '.\n'
        l_1_loop = missing
        for l_1_s, l_1_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'series')), undefined):
            _loop_vars = {}
            pass
            yield '\n### '
            yield str(t_4(environment.getattr(l_1_s, 'label')))
            yield '\n\n'
            yield str(t_2(environment.concat(('series ', environment.getattr(l_1_s, 'name'), ' = ', environment.getattr(l_1_s, 'formula'), ))))
            if environment.getattr(l_1_s, 'unit'):
                pass
                yield ' <sub>in '
                yield str(t_4(environment.getattr(l_1_s, 'unit')))
                yield '</sub>'
            yield '\n'
            if environment.getattr(l_1_s, 'facts'):
                pass
                yield '\n'
                for l_2_f in environment.call(context, environment.ticking, environment.getattr(l_1_s, 'facts'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '- '
                    if environment.getattr(l_2_f, 'scenario'):
                        pass
                        yield str(t_2(environment.getattr(l_2_f, 'scenario')))
                        yield ': '
                    yield str(environment.getattr(l_2_f, 'first'))
                    yield ' in '
                    yield str(environment.getattr(l_2_f, 'first_period'))
                    yield ', '
                    yield str(environment.getattr(l_2_f, 'last'))
                    yield ' in '
                    yield str(environment.getattr(l_2_f, 'last_period'))
                    if (not t_5(environment.getattr(l_2_f, 'low'))):
                        pass
                        yield '; lowest '
                        yield str(environment.getattr(l_2_f, 'low'))
                        yield ', in '
                        yield str(environment.getattr(l_2_f, 'low_period'))
                    yield '.\n'
                l_2_f = missing
            if environment.getattr(l_1_s, 'plot'):
                pass
                yield '\n!['
                yield str(t_4(environment.getattr(l_1_s, 'label')))
                yield ' in each '
                yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'unit'))
                yield str((', a line per scenario' if (t_3(environment.getattr(l_1_s, 'columns')) > 1) else cond_expr_undefined("the inline if-expression on line 24 in 'periods.md.j2' evaluated to false and no else section was defined.")))
                yield ']('
                yield str(environment.getattr(l_1_s, 'plot'))
                yield ')\n'
            if environment.getattr(l_1_s, 'fan_plot'):
                pass
                yield '\n!['
                yield str(t_4(environment.getattr(l_1_s, 'label')))
                yield ' over the trials: the median, and bands holding the middle 50% and 90% of trials, in each '
                yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'unit'))
                yield ']('
                yield str(environment.getattr(l_1_s, 'fan_plot'))
                yield ')\n\nOver the trials of the uncertain inputs (see [Uncertain inputs](#uncertain-inputs)), in each '
                yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'unit'))
                yield ': the median (a solid line), the middle 50% and 90% of trials (the bands) and the plan as written (dotted).\n'
            yield '\n'
            yield str(t_2(environment.getattr(l_1_s, 'name')))
            yield ' '
            yield str(environment.getattr(l_1_s, 'every'))
            if (environment.getattr(l_1_s, 'unit') and (t_3(environment.getattr(l_1_s, 'columns')) > 1)):
                pass
                yield ', in '
                yield str(t_4(environment.getattr(l_1_s, 'unit')))
            yield ':\n\n'
            l_2_loop = missing
            for l_2_t, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_s, 'tables'), _loop_vars=_loop_vars), undefined):
                _loop_vars = {}
                pass
                if (not environment.getattr(l_2_loop, 'first')):
                    pass
                    yield '\n'
                yield '| '
                yield str(t_1(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'column')))
                yield ' |'
                for l_3_c in environment.call(context, environment.ticking, environment.getattr(l_2_t, 'columns'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield ' '
                    yield str(t_1(l_3_c))
                    yield ' |'
                l_3_c = missing
                yield '\n|---|'
                for l_3_c in environment.call(context, environment.ticking, environment.getattr(l_2_t, 'columns'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '---:|'
                l_3_c = missing
                yield '\n'
                for l_3_r in environment.call(context, environment.ticking, environment.getattr(l_2_t, 'rows'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '| '
                    yield str(t_1(environment.getattr(l_3_r, 'at')))
                    yield ' |'
                    for l_4_v in environment.call(context, environment.ticking, environment.getattr(l_3_r, 'cells'), _loop_vars=_loop_vars):
                        _loop_vars = {}
                        pass
                        yield ' '
                        yield str(t_1(l_4_v))
                        yield ' |'
                    l_4_v = missing
                    yield '\n'
                l_3_r = missing
            l_2_loop = l_2_t = missing
        l_1_loop = l_1_s = missing
        if environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'others'):
            pass
            yield '\n### The other series\n\n`planner eval '
            yield str((undefined(name='file') if l_0_file is missing else l_0_file))
            yield '` prints each of them in every '
            yield str(environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'unit'))
            yield '.\n\n'
            for l_1_o in environment.call(context, environment.ticking, environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'others')):
                _loop_vars = {}
                pass
                yield '- '
                if (environment.getattr(l_1_o, 'label') != environment.getattr(l_1_o, 'name')):
                    pass
                    yield str(t_4(environment.getattr(l_1_o, 'label')))
                    yield ': '
                yield str(t_2(environment.concat(('series ', environment.getattr(l_1_o, 'name'), ' = ', environment.getattr(l_1_o, 'formula'), ))))
                if environment.getattr(l_1_o, 'unit'):
                    pass
                    yield ' <sub>in '
                    yield str(t_4(environment.getattr(l_1_o, 'unit')))
                    yield '</sub>'
                yield '\n'
            l_1_o = missing

blocks = {}
debug_info = '5=43&7=46&9=48&10=51&12=55&14=57&16=64&18=67&19=71&22=90&24=93&26=100&28=103&30=109&33=112&35=121&36=124&39=128&41=138&43=144&44=148&49=161&53=164&55=168&56=172'