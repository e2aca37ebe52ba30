from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join  # made by jinja2 3.1.6 from sha256 0199ad7326245c1022ad3f805fc5700841a6a747795ce560181bb46931b2e581
name = 'report.md.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_title = resolve('title')
    l_0_generator = resolve('generator')
    l_0_file = resolve('file')
    l_0_findings = resolve('findings')
    l_0_scenarios = resolve('scenarios')
    l_0_headline = resolve('headline')
    l_0_has_scenarios = resolve('has_scenarios')
    l_0_layout = resolve('layout')
    l_0_periods = resolve('periods')
    l_0_inputs = resolve('inputs')
    l_0_derived = resolve('derived')
    l_0_varying = resolve('varying')
    l_0_same = resolve('same')
    l_0_sweeps = resolve('sweeps')
    l_0_plots = resolve('plots')
    l_0_solves = resolve('solves')
    l_0_optimizations = resolve('optimizations')
    l_0_sensitivity = resolve('sensitivity')
    l_0_sensitivity_plot = resolve('sensitivity_plot')
    l_0_sensitivity_remarks = resolve('sensitivity_remarks')
    l_0_axes = resolve('axes')
    l_0_assumptions = resolve('assumptions')
    l_0_sources = resolve('sources')
    l_0_checks = resolve('checks')
    l_0_functions = resolve('functions')
    l_0_graph = resolve('graph')
    l_0_scenario_head = l_0_scenario_rule = l_0_scenario_cells = l_0_per_scenario_rows = l_0_label = l_0_fold = l_0_unfold = l_0_cols = l_0_changed = l_0_rows = l_0_defs = missing
    try:
        t_1 = environment.filters['batch']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'batch' found.")
    try:
        t_2 = environment.filters['capitalize']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'capitalize' found.")
    try:
        t_3 = environment.filters['cell']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'cell' found.")
    try:
        t_4 = environment.filters['code']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'code' found.")
    try:
        t_5 = environment.filters['ident']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'ident' found.")
    try:
        t_6 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_7 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_8 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_9 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_10 = environment.filters['math']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No filter named 'math' found.")
    try:
        t_11 = environment.filters['rejectattr']
    except KeyError:
        @internalcode
        def t_11(*unused):
            raise TemplateRuntimeError("No filter named 'rejectattr' found.")
    try:
        t_12 = environment.filters['replace']
    except KeyError:
        @internalcode
        def t_12(*unused):
            raise TemplateRuntimeError("No filter named 'replace' found.")
    try:
        t_13 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_13(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_14 = environment.filters['text']
    except KeyError:
        @internalcode
        def t_14(*unused):
            raise TemplateRuntimeError("No filter named 'text' found.")
    try:
        t_15 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_15(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_first):
        t_16 = []
        if l_1_first is missing:
            l_1_first = undefined("parameter 'first' was not provided", name='first')
        pass
        if environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'axis_columns'):
            pass
            for l_2_a in environment.call(context, environment.ticking, (undefined(name='axes') if l_0_axes is missing else l_0_axes)):
                _loop_vars = {}
                pass
                t_16.extend((
                    '| ',
                    str(environment.getattr(l_2_a, 'name')),
                    ' ',
                ))
            l_2_a = missing
        else:
            pass
            t_16.append(
                '| scenario ',
            )
        return concat(t_16)
    context.exported_vars.add('scenario_head')
    context.vars['scenario_head'] = l_0_scenario_head = Macro(environment, macro, 'scenario_head', ('first',), False, False, False, context.eval_ctx.autoescape)
    def macro():
        t_17 = []
        pass
        if environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'axis_columns'):
            pass
            for l_2_a in environment.call(context, environment.ticking, (undefined(name='axes') if l_0_axes is missing else l_0_axes)):
                _loop_vars = {}
                pass
                t_17.append(
                    '|---',
                )
            l_2_a = missing
        else:
            pass
            t_17.append(
                '|---',
            )
        return concat(t_17)
    context.exported_vars.add('scenario_rule')
    context.vars['scenario_rule'] = l_0_scenario_rule = Macro(environment, macro, 'scenario_rule', (), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_s):
        t_18 = []
        if l_1_s is missing:
            l_1_s = undefined("parameter 's' was not provided", name='s')
        pass
        if environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'axis_columns'):
            pass
            for l_2_m in environment.call(context, environment.ticking, environment.getattr(l_1_s, 'members')):
                _loop_vars = {}
                pass
                t_18.extend((
                    '| ',
                    str(t_3(l_2_m)),
                    ' ',
                ))
            l_2_m = missing
        else:
            pass
            t_18.extend((
                '| ',
                str(t_4(environment.getattr(l_1_s, 'name'))),
                ' ',
            ))
        return concat(t_18)
    context.exported_vars.add('scenario_cells')
    context.vars['scenario_cells'] = l_0_scenario_cells = Macro(environment, macro, 'scenario_cells', ('s',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_qs, l_1_field):
        t_19 = []
        if l_1_qs is missing:
            l_1_qs = undefined("parameter 'qs' was not provided", name='qs')
        if l_1_field is missing:
            l_1_field = 'scenario_values'
        pass
        l_2_loop = missing
        for l_2_group, l_2_loop in LoopContext(environment.call(context, environment.ticking, t_1(l_1_qs, environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'columns_per_table'))), undefined):
            _loop_vars = {}
            pass
            t_19.extend((
                '\n',
                str(environment.call(context, (undefined(name='scenario_head') if l_0_scenario_head is missing else l_0_scenario_head), _loop_vars=_loop_vars)),
            ))
            for l_3_q in environment.call(context, environment.ticking, l_2_group, _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                t_19.extend((
                    '| ',
                    str(t_4(environment.getattr(l_3_q, 'name'))),
                ))
                if environment.getattr(l_3_q, 'unit'):
                    pass
                    t_19.extend((
                        '<br>',
                        str(t_3(environment.getattr(l_3_q, 'unit'))),
                    ))
                t_19.append(
                    ' ',
                )
            l_3_q = missing
            t_19.extend((
                '|\n',
                str(environment.call(context, (undefined(name='scenario_rule') if l_0_scenario_rule is missing else l_0_scenario_rule), _loop_vars=_loop_vars)),
            ))
            for l_3_q in environment.call(context, environment.ticking, l_2_group, _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                t_19.append(
                    '|---:',
                )
            l_3_q = missing
            t_19.append(
                '|\n',
            )
            l_3_loop = missing
            for l_3_s, l_3_loop in LoopContext(environment.call(context, environment.ticking, (undefined(name='scenarios') if l_0_scenarios is missing else l_0_scenarios), _loop_vars=_loop_vars), undefined):
                l_3_i = missing
                _loop_vars = {}
                pass
                l_3_i = environment.getattr(l_3_loop, 'index0')
                _loop_vars['i'] = l_3_i
                t_19.append(
                    str(environment.call(context, (undefined(name='scenario_cells') if l_0_scenario_cells is missing else l_0_scenario_cells), l_3_s, _loop_vars=_loop_vars)),
                )
                for l_4_q in environment.call(context, environment.ticking, l_2_group, _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    t_19.extend((
                        '| ',
                        str(t_3(environment.getitem(environment.getitem(l_4_q, l_1_field), (undefined(name='i') if l_3_i is missing else l_3_i)))),
                        ' ',
                    ))
                l_4_q = missing
                t_19.append(
                    '|\n',
                )
            l_3_loop = l_3_s = l_3_i = missing
        l_2_loop = l_2_group = missing
        return concat(t_19)
    context.exported_vars.add('per_scenario_rows')
    context.vars['per_scenario_rows'] = l_0_per_scenario_rows = Macro(environment, macro, 'per_scenario_rows', ('qs', 'field'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_q, l_1_input):
        t_20 = []
        if l_1_q is missing:
            l_1_q = undefined("parameter 'q' was not provided", name='q')
        if l_1_input is missing:
            l_1_input = False
        pass
        t_20.append(
            str(t_12(context.eval_ctx, t_3(t_14(environment.getattr(l_1_q, 'label'))), '\\_', '\\_<wbr>')),
        )
        if environment.getattr(l_1_q, 'lower_bound'):
            pass
            t_20.append(
                ' (lower bound)',
            )
        if (l_1_input and (environment.getattr(l_1_q, 'kind') == 'input')):
            pass
            t_20.append(
                ' (input)',
            )
        t_20.extend((
            '<br><sub>',
            str(t_5(environment.getattr(l_1_q, 'name'))),
        ))
        if environment.getattr(l_1_q, 'unit'):
            pass
            t_20.extend((
                ', ',
                str(t_3(environment.getattr(l_1_q, 'unit'))),
            ))
        t_20.append(
            '</sub>',
        )
        return concat(t_20)
    context.exported_vars.add('label')
    context.vars['label'] = l_0_label = Macro(environment, macro, 'label', ('q', 'input'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_n, l_1_summary):
        t_21 = []
        if l_1_n is missing:
            l_1_n = undefined("parameter 'n' was not provided", name='n')
        if l_1_summary is missing:
            l_1_summary = undefined("parameter 'summary' was not provided", name='summary')
        pass
        if (l_1_n > environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'fold_after')):
            pass
            t_21.extend((
                '<details><summary>',
                str(l_1_summary),
                '</summary>',
            ))
        return concat(t_21)
    context.exported_vars.add('fold')
    context.vars['fold'] = l_0_fold = Macro(environment, macro, 'fold', ('n', 'summary'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_n):
        t_22 = []
        if l_1_n is missing:
            l_1_n = undefined("parameter 'n' was not provided", name='n')
        pass
        if (l_1_n > environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'fold_after')):
            pass
            t_22.append(
                '</details>',
            )
        return concat(t_22)
    context.exported_vars.add('unfold')
    context.vars['unfold'] = l_0_unfold = Macro(environment, macro, 'unfold', ('n',), False, False, False, context.eval_ctx.autoescape)
    yield '# '
    yield str((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '\n\n*Generated by '
    yield str((undefined(name='generator') if l_0_generator is missing else l_0_generator))
    yield ' from '
    yield str(t_4((undefined(name='file') if l_0_file is missing else l_0_file)))
    yield '.*\n\n## Findings\n'
    for l_1_note in environment.call(context, environment.ticking, environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'notes')):
        _loop_vars = {}
        pass
        yield '\n'
        yield str(l_1_note)
        yield '\n'
    l_1_note = missing
    if environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'answers'):
        pass
        yield '\n'
        for l_1_a in environment.call(context, environment.ticking, environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'answers')):
            _loop_vars = {}
            pass
            yield '- '
            yield str(environment.getattr(l_1_a, 'sentence'))
            for l_2_u in environment.call(context, environment.ticking, environment.getattr(l_1_a, 'unanswered'), _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                yield ' No answer in '
                yield str(t_4(environment.getattr(l_2_u, 'scenario')))
                yield ': '
                yield str(t_14(environment.getattr(l_2_u, 'reason')))
            l_2_u = missing
            yield '\n'
        l_1_a = missing
    l_0_cols = t_8(context.eval_ctx, t_9(context, (undefined(name='scenarios') if l_0_scenarios is missing else l_0_scenarios), attribute='name'))
    context.vars['cols'] = l_0_cols
    context.exported_vars.add('cols')
    if environment.getattr((undefined(name='headline') if l_0_headline is missing else l_0_headline), 'quantities'):
        pass
        yield '\n'
        if (not (undefined(name='has_scenarios') if l_0_has_scenarios is missing else l_0_has_scenarios)):
            pass
            for l_1_q in environment.call(context, environment.ticking, environment.getattr((undefined(name='headline') if l_0_headline is missing else l_0_headline), 'quantities')):
                _loop_vars = {}
                pass
                yield '- '
                yield str(t_14(environment.getattr(l_1_q, 'label')))
                yield ': **'
                yield str(environment.getattr(l_1_q, 'value'))
                yield '**'
                if environment.getattr(l_1_q, 'lower_bound'):
                    pass
                    yield ' (a lower bound)'
                yield ' <sub>'
                yield str(t_4(environment.getattr(l_1_q, 'name')))
                yield '</sub>\n'
            l_1_q = missing
        elif environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'scenario_columns'):
            pass
            yield '| | '
            yield str(t_6(context.eval_ctx, t_9(context, (undefined(name='cols') if l_0_cols is missing else l_0_cols), 'ident'), ' | '))
            yield ' |\n|---|'
            for l_1_c in environment.call(context, environment.ticking, (undefined(name='cols') if l_0_cols is missing else l_0_cols)):
                _loop_vars = {}
                pass
                yield '---:|'
            l_1_c = missing
            yield '\n'
            for l_1_q in environment.call(context, environment.ticking, environment.getattr((undefined(name='headline') if l_0_headline is missing else l_0_headline), 'quantities')):
                _loop_vars = {}
                pass
                yield '| '
                yield str(environment.call(context, (undefined(name='label') if l_0_label is missing else l_0_label), l_1_q, _loop_vars=_loop_vars))
                yield ' | '
                for l_2_v in environment.call(context, environment.ticking, environment.getattr(l_1_q, 'scenario_values'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield str(t_3(l_2_v))
                    yield ' | '
                l_2_v = missing
                yield '\n'
            l_1_q = missing
        else:
            pass
            yield str(environment.call(context, (undefined(name='per_scenario_rows') if l_0_per_scenario_rows is missing else l_0_per_scenario_rows), environment.getattr((undefined(name='headline') if l_0_headline is missing else l_0_headline), 'quantities')))
            yield '\n'
    if ((undefined(name='periods') if l_0_periods is missing else l_0_periods) and environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'findings')):
        pass
        yield '\n'
        for l_1_f in environment.call(context, environment.ticking, environment.getattr((undefined(name='periods') if l_0_periods is missing else l_0_periods), 'findings')):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_f)
            yield '\n'
        l_1_f = missing
    yield '\n'
    yield str(environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'checks'))
    if environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'failing'):
        pass
        yield ' Failing: '
        l_1_loop = missing
        for l_1_c, l_1_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'failing')), undefined):
            _loop_vars = {}
            pass
            yield str(t_4(environment.getattr(l_1_c, 'condition')))
            if environment.getattr(l_1_c, 'scenario'):
                pass
                yield ' in '
                yield str(t_4(environment.getattr(l_1_c, 'scenario')))
            yield ' ('
            if environment.getattr(l_1_c, 'error'):
                pass
                yield 'no value: '
                yield str(t_14(environment.getattr(l_1_c, 'error')))
            else:
                pass
                yield str(environment.getattr(l_1_c, 'expected'))
                yield ' expected, '
                yield str(environment.getattr(l_1_c, 'actual'))
                yield ' found'
            yield ')'
            yield str(('; ' if (not environment.getattr(l_1_loop, 'last')) else '.'))
        l_1_loop = l_1_c = missing
        yield ' See [Checks](#checks).'
    yield '\n'
    if environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'about'):
        pass
        yield '\n## About this plan\n'
        for l_1_note in environment.call(context, environment.ticking, environment.getattr((undefined(name='findings') if l_0_findings is missing else l_0_findings), 'about')):
            _loop_vars = {}
            pass
            yield '\n'
            yield str(l_1_note)
            yield '\n'
        l_1_note = missing
    yield '\n## Results\n'
    l_0_changed = t_8(context.eval_ctx, t_13(context, (undefined(name='inputs') if l_0_inputs is missing else l_0_inputs), 'overridden'))
    context.vars['changed'] = l_0_changed
    context.exported_vars.add('changed')
    l_0_rows = environment.call_binop(context, '+', (undefined(name='changed') if l_0_changed is missing else l_0_changed), (undefined(name='derived') if l_0_derived is missing else l_0_derived))
    context.vars['rows'] = l_0_rows
    context.exported_vars.add('rows')
    if (not (undefined(name='derived') if l_0_derived is missing else l_0_derived)):
        pass
        yield '\nThe plan defines no derived quantities.\n'
    elif ((undefined(name='has_scenarios') if l_0_has_scenarios is missing else l_0_has_scenarios) and environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'scenario_columns')):
        pass
        yield '\nEvery derived quantity'
        if (undefined(name='changed') if l_0_changed is missing else l_0_changed):
            pass
            yield ' and every input a scenario sets'
        yield ', per scenario'
        if t_8(context.eval_ctx, t_13(context, (undefined(name='rows') if l_0_rows is missing else l_0_rows), 'varies')):
            pass
            yield '; values in bold differ between scenarios'
        yield '. Formulas are under [Definitions](#definitions).\n\n'
        yield str(environment.call(context, (undefined(name='fold') if l_0_fold is missing else l_0_fold), t_7((undefined(name='rows') if l_0_rows is missing else l_0_rows)), environment.concat((t_7((undefined(name='rows') if l_0_rows is missing else l_0_rows)), ' quantities', ))))
        yield '\n\n| | '
        yield str(t_6(context.eval_ctx, t_9(context, (undefined(name='cols') if l_0_cols is missing else l_0_cols), 'ident'), ' | '))
        yield ' |\n|---|'
        for l_1_c in environment.call(context, environment.ticking, (undefined(name='cols') if l_0_cols is missing else l_0_cols)):
            _loop_vars = {}
            pass
            yield '---:|'
        l_1_c = missing
        yield '\n'
        for l_1_q in environment.call(context, environment.ticking, (undefined(name='rows') if l_0_rows is missing else l_0_rows)):
            _loop_vars = {}
            pass
            yield '| '
            yield str(environment.call(context, (undefined(name='label') if l_0_label is missing else l_0_label), l_1_q, True, _loop_vars=_loop_vars))
            yield ' | '
            for l_2_v in environment.call(context, environment.ticking, environment.getattr(l_1_q, 'scenario_values'), _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                if environment.getattr(l_1_q, 'varies'):
                    pass
                    yield '**'
                yield str(t_3(l_2_v))
                if environment.getattr(l_1_q, 'varies'):
                    pass
                    yield '**'
                yield ' | '
            l_2_v = missing
            yield '\n'
        l_1_q = missing
        yield '\n'
        yield str(environment.call(context, (undefined(name='unfold') if l_0_unfold is missing else l_0_unfold), t_7((undefined(name='rows') if l_0_rows is missing else l_0_rows))))
        yield '\n'
    elif (undefined(name='has_scenarios') if l_0_has_scenarios is missing else l_0_has_scenarios):
        pass
        l_0_varying = t_8(context.eval_ctx, t_11(context, t_13(context, (undefined(name='derived') if l_0_derived is missing else l_0_derived), 'varies'), 'headline'))
        context.vars['varying'] = l_0_varying
        context.exported_vars.add('varying')
        l_0_same = t_8(context.eval_ctx, t_11(context, (undefined(name='derived') if l_0_derived is missing else l_0_derived), 'varies'))
        context.vars['same'] = l_0_same
        context.exported_vars.add('same')
        if (undefined(name='varying') if l_0_varying is missing else l_0_varying):
            pass
            yield '\nOther derived quantities that differ between scenarios (the headline figures are under [Findings](#findings)):\n'
            yield str(environment.call(context, (undefined(name='per_scenario_rows') if l_0_per_scenario_rows is missing else l_0_per_scenario_rows), (undefined(name='varying') if l_0_varying is missing else l_0_varying)))
            yield '\n'
        if (undefined(name='same') if l_0_same is missing else l_0_same):
            pass
            yield '\nThe same in every scenario:\n\n'
            yield str(environment.call(context, (undefined(name='fold') if l_0_fold is missing else l_0_fold), t_7((undefined(name='same') if l_0_same is missing else l_0_same)), environment.concat((t_7((undefined(name='same') if l_0_same is missing else l_0_same)), ' quantities', ))))
            yield '\n\n| | value |\n|---|---:|\n'
            for l_1_q in environment.call(context, environment.ticking, (undefined(name='same') if l_0_same is missing else l_0_same)):
                _loop_vars = {}
                pass
                yield '| '
                yield str(environment.call(context, (undefined(name='label') if l_0_label is missing else l_0_label), l_1_q, _loop_vars=_loop_vars))
                yield ' | '
                yield str(t_3(environment.getattr(l_1_q, 'figure')))
                yield ' |\n'
            l_1_q = missing
            yield '\n'
            yield str(environment.call(context, (undefined(name='unfold') if l_0_unfold is missing else l_0_unfold), t_7((undefined(name='same') if l_0_same is missing else l_0_same))))
            yield '\n'
    else:
        pass
        yield '\nFormulas are under [Definitions](#definitions).\n\n'
        yield str(environment.call(context, (undefined(name='fold') if l_0_fold is missing else l_0_fold), t_7((undefined(name='derived') if l_0_derived is missing else l_0_derived)), environment.concat((t_7((undefined(name='derived') if l_0_derived is missing else l_0_derived)), ' quantities', ))))
        yield '\n\n| | value |\n|---|---:|\n'
        for l_1_q in environment.call(context, environment.ticking, (undefined(name='derived') if l_0_derived is missing else l_0_derived)):
            _loop_vars = {}
            pass
            yield '| '
            yield str(environment.call(context, (undefined(name='label') if l_0_label is missing else l_0_label), l_1_q, _loop_vars=_loop_vars))
            yield ' | '
            yield str(t_3(environment.getattr(l_1_q, 'figure')))
            yield ' |\n'
        l_1_q = missing
        yield '\n'
        yield str(environment.call(context, (undefined(name='unfold') if l_0_unfold is missing else l_0_unfold), t_7((undefined(name='derived') if l_0_derived is missing else l_0_derived))))
        yield '\n'
    try:
        template = environment.get_template('periods.md.j2', 'report.md.j2')
    except TemplateNotFound:
        pass
    else:
        gen = template.root_render_func(template.new_context(context.get_all(), True, {'changed': l_0_changed, 'cols': l_0_cols, 'defs': l_0_defs, 'fold': l_0_fold, 'label': l_0_label, 'per_scenario_rows': l_0_per_scenario_rows, 'rows': l_0_rows, 'same': l_0_same, 'scenario_cells': l_0_scenario_cells, 'scenario_head': l_0_scenario_head, 'scenario_rule': l_0_scenario_rule, 'unfold': l_0_unfold, 'varying': l_0_varying}))
        try:
            for event in gen:
                yield event
        finally: gen.close()
    if (undefined(name='sweeps') if l_0_sweeps is missing else l_0_sweeps):
        pass
        yield '\n## Sweeps\n'
        l_1_loop = missing
        for l_1_s, l_1_loop in LoopContext(environment.call(context, environment.ticking, (undefined(name='sweeps') if l_0_sweeps is missing else l_0_sweeps)), undefined):
            _loop_vars = {}
            pass
            yield '\n### Sweep '
            yield str(environment.getattr(l_1_s, 'index'))
            yield ': '
            yield str(t_4(environment.getattr(l_1_s, 'text')))
            yield '\n'
            l_2_loop = missing
            for l_2_t, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_s, 'tables'), _loop_vars=_loop_vars), undefined):
                _loop_vars = {}
                pass
                yield '\n'
                if ((t_7(environment.getattr(l_1_s, 'tables')) > 1) or (environment.getattr(l_2_t, 'scenario') != 'base')):
                    pass
                    yield 'Scenario '
                    yield str(t_4(environment.getattr(l_2_t, 'scenario')))
                    yield ':\n\n'
                yield '|'
                for l_3_c in environment.call(context, environment.ticking, environment.getattr(l_1_s, 'columns'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield ' '
                    yield str(t_4(environment.getattr(l_3_c, 'name')))
                    if environment.getattr(l_3_c, 'unit'):
                        pass
                        yield '<br>'
                        yield str(t_3(environment.getattr(l_3_c, 'unit')))
                    yield ' |'
                l_3_c = missing
                if environment.getattr(l_2_t, 'points_with_issues'):
                    pass
                    yield ' issues |'
                yield '\n|'
                for l_3_c in environment.call(context, environment.ticking, environment.getattr(l_1_s, 'columns'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '---:|'
                l_3_c = missing
                if environment.getattr(l_2_t, 'points_with_issues'):
                    pass
                    yield '---|'
                yield '\n'
                l_3_loop = missing
                for l_3_row, l_3_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_2_t, 'rows'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    yield '| '
                    yield str(t_6(context.eval_ctx, t_9(context, l_3_row, 'cell'), ' | '))
                    yield ' |'
                    if environment.getattr(l_2_t, 'points_with_issues'):
                        pass
                        yield ' '
                        yield str(t_3(t_14(environment.getitem(environment.getattr(l_2_t, 'row_notes'), environment.getattr(l_3_loop, 'index0')))))
                        yield ' |'
                    yield '\n'
                l_3_loop = l_3_row = missing
                if environment.getattr(l_2_t, 'omitted'):
                    pass
                    yield '\n'
                    yield str(environment.getattr(l_2_t, 'omitted'))
                    yield ' more of '
                    yield str(environment.getattr(l_2_t, 'points'))
                    yield ' points are not shown here; `planner sweep` prints every point.\n'
            l_2_loop = l_2_t = missing
            if environment.getattr(l_1_s, 'plot'):
                pass
                yield '\n![Sweep '
                yield str(environment.getattr(l_1_s, 'index'))
                yield ']('
                yield str(environment.getattr(l_1_s, 'plot'))
                yield ')\n'
        l_1_loop = l_1_s = missing
        if environment.getattr((undefined(name='plots') if l_0_plots is missing else l_0_plots), 'note'):
            pass
            yield '\n*'
            yield str(t_2(environment.getattr((undefined(name='plots') if l_0_plots is missing else l_0_plots), 'note')))
            yield '.*\n'
        for l_1_n in environment.call(context, environment.ticking, environment.getattr((undefined(name='plots') if l_0_plots is missing else l_0_plots), 'skipped')):
            _loop_vars = {}
            pass
            yield '\n*Not plotted: '
            yield str(t_14(l_1_n))
            yield '.*\n'
        l_1_n = missing
    def t_23(fiter):
        for (l_1_section, l_1_questions) in fiter:
            if l_1_questions:
                yield (l_1_section, l_1_questions)
    for (l_1_section, l_1_questions) in t_23(environment.call(context, environment.ticking, [('Solves', (undefined(name='solves') if l_0_solves is missing else l_0_solves)), ('Optimisation', (undefined(name='optimizations') if l_0_optimizations is missing else l_0_optimizations))])):
        _loop_vars = {}
        pass
        yield '\n## '
        yield str(l_1_section)
        yield '\n'
        for l_2_s in environment.call(context, environment.ticking, l_1_questions, _loop_vars=_loop_vars):
            _loop_vars = {}
            pass
            yield '\n### '
            yield str(t_4(environment.getattr(l_2_s, 'text')))
            yield '\n\n'
            if environment.getattr(l_2_s, 'closed_form_latex'):
                pass
                yield 'Closed form, '
                if (environment.getattr(l_2_s, 'closed_form_units') == 'base'):
                    pass
                    yield "over each quantity in base units (seconds, bytes, the plan's base currency)"
                else:
                    pass
                    yield 'over each quantity in the unit this report shows it in'
                yield ':\n\n```math\n'
                yield str(environment.getattr(l_2_s, 'closed_form_latex'))
                yield '\n```\n\n'
            if environment.getattr(l_2_s, 'closed_form_unshown'):
                pass
                yield 'There is '
                yield str(t_14(environment.getattr(l_2_s, 'closed_form_unshown')))
                yield '; `planner solve --closed-form` prints it.\n\n'
            if environment.getattr(l_2_s, 'closed_form_omitted'):
                pass
                yield 'The closed form is too long to follow here; `planner solve --closed-form` prints it.\n\n'
            if environment.getattr(l_2_s, 'method'):
                pass
                yield 'Method: '
                yield str(t_14(environment.getattr(l_2_s, 'method')))
                yield '.\n\n'
            for l_3_a in environment.call(context, environment.ticking, environment.getattr(l_2_s, 'answers'), _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                if environment.getattr(l_3_a, 'ok'):
                    pass
                    yield '- '
                    if ((environment.getattr(l_3_a, 'scenario') != 'base') or (t_7(environment.getattr(l_2_s, 'answers')) > 1)):
                        pass
                        yield str(t_4(environment.getattr(l_3_a, 'scenario')))
                        yield ': '
                    yield str(t_4(environment.getattr(l_2_s, 'target')))
                    yield ' = **'
                    yield str(environment.getattr(l_3_a, 'value'))
                    yield '**'
                    if environment.getattr(l_3_a, 'optimum'):
                        pass
                        yield ' (optimum '
                        yield str(environment.getattr(l_3_a, 'optimum'))
                        yield ')'
                    yield '\n'
                    if (environment.getattr(l_3_a, 'closed_form_latex') and (not environment.getattr(l_2_s, 'closed_form_latex'))):
                        pass
                        yield '  - closed form'
                        if (environment.getattr(l_3_a, 'closed_form_units') == 'base'):
                            pass
                            yield ' (in base units)'
                        yield ': '
                        yield str(t_10(environment.getattr(l_3_a, 'closed_form_latex')))
                        yield '\n'
                    yield '  - verified: '
                    yield str(t_14(environment.getattr(l_3_a, 'verification')))
                    yield '\n'
                    if (not environment.getattr(l_2_s, 'method')):
                        pass
                        yield '  - method: '
                        yield str(t_14(environment.getattr(l_3_a, 'method')))
                        yield '\n'
                    for l_4_n in environment.call(context, environment.ticking, environment.getattr(l_3_a, 'notes'), _loop_vars=_loop_vars):
                        _loop_vars = {}
                        pass
                        yield '  - '
                        yield str(t_14(l_4_n))
                        yield '\n'
                    l_4_n = missing
                else:
                    pass
                    yield '- '
                    if ((environment.getattr(l_3_a, 'scenario') != 'base') or (t_7(environment.getattr(l_2_s, 'answers')) > 1)):
                        pass
                        yield str(t_4(environment.getattr(l_3_a, 'scenario')))
                        yield ': '
                    yield 'no answer in the domain: '
                    yield str(t_14(environment.getattr(l_3_a, 'error')))
                    yield '\n'
                    for l_4_d in environment.call(context, environment.ticking, environment.getattr(l_3_a, 'error_details'), _loop_vars=_loop_vars):
                        _loop_vars = {}
                        pass
                        yield '  - '
                        yield str(t_14(l_4_d))
                        yield '\n'
                    l_4_d = missing
            l_3_a = missing
        l_2_s = missing
    l_1_section = l_1_questions = missing
    if (undefined(name='sensitivity') if l_0_sensitivity is missing else l_0_sensitivity):
        pass
        yield "\n## What moves the headline figures\n\nA 1% rise in the input moves the figure by about that many percent (the elasticity ∂y/∂x · x/y at each scenario's values; where a step or kink lies within 1%, the effect of a 1% change itself); the largest movers of each headline figure, a range where the scenarios differ.\n"
        if (undefined(name='sensitivity_plot') if l_0_sensitivity_plot is missing else l_0_sensitivity_plot):
            pass
            yield '\n![What moves the headline figures]('
            yield str((undefined(name='sensitivity_plot') if l_0_sensitivity_plot is missing else l_0_sensitivity_plot))
            yield ')\n'
        yield '\n'
        l_1_loop = missing
        for l_1_s, l_1_loop in LoopContext(environment.call(context, environment.ticking, (undefined(name='sensitivity') if l_0_sensitivity is missing else l_0_sensitivity)), undefined):
            l_1_others = missing
            _loop_vars = {}
            pass
            l_1_others = (t_7(environment.getattr(l_1_s, 'rows')) - t_7(environment.getattr(l_1_s, 'top')))
            _loop_vars['others'] = l_1_others
            yield '- '
            yield str(t_14(environment.getattr(l_1_s, 'label')))
            yield ' ('
            yield str(t_4(environment.getattr(l_1_s, 'quantity')))
            yield '): '
            if environment.getattr(l_1_s, 'top'):
                pass
                l_2_loop = missing
                for l_2_r, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_s, 'top'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    yield str(t_4(environment.getattr(l_2_r, 'input')))
                    yield ' '
                    yield str(environment.getattr(l_2_r, 'text'))
                    yield str((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 249 in 'report.md.j2' evaluated to false and no else section was defined.")))
                l_2_loop = l_2_r = missing
                if ((undefined(name='others') if l_1_others is missing else l_1_others) > 0):
                    pass
                    yield '; '
                    yield str((undefined(name='others') if l_1_others is missing else l_1_others))
                    yield ' other '
                    yield str(('input moves' if ((undefined(name='others') if l_1_others is missing else l_1_others) == 1) else 'inputs move'))
                    yield ' it less'
            else:
                pass
                yield 'no input moves it at these values (a small change of any of its '
                yield str(t_7(environment.getattr(l_1_s, 'rows')))
                yield ' inputs leaves it as it is)'
            yield '.\n'
        l_1_loop = l_1_s = l_1_others = missing
        if (undefined(name='sensitivity_remarks') if l_0_sensitivity_remarks is missing else l_0_sensitivity_remarks):
            pass
            yield '\nWhere an elasticity has two sides, or none:\n\n'
            for l_1_m in environment.call(context, environment.ticking, (undefined(name='sensitivity_remarks') if l_0_sensitivity_remarks is missing else l_0_sensitivity_remarks)):
                _loop_vars = {}
                pass
                yield '- '
                yield str(t_14(environment.getattr(l_1_m, 'text')))
                yield ' ('
                yield str(t_6(context.eval_ctx, t_9(context, environment.getattr(l_1_m, 'quantities'), 'code'), ', '))
                yield ').\n'
            l_1_m = missing
    try:
        template = environment.get_template('uncertainty.md.j2', 'report.md.j2')
    except TemplateNotFound:
        pass
    else:
        gen = template.root_render_func(template.new_context(context.get_all(), True, {'changed': l_0_changed, 'cols': l_0_cols, 'defs': l_0_defs, 'fold': l_0_fold, 'label': l_0_label, 'per_scenario_rows': l_0_per_scenario_rows, 'rows': l_0_rows, 'same': l_0_same, 'scenario_cells': l_0_scenario_cells, 'scenario_head': l_0_scenario_head, 'scenario_rule': l_0_scenario_rule, 'unfold': l_0_unfold, 'varying': l_0_varying}))
        try:
            for event in gen:
                yield event
        finally: gen.close()
    yield '\n'
    if (undefined(name='has_scenarios') if l_0_has_scenarios is missing else l_0_has_scenarios):
        pass
        yield '\n## Scenarios\n\n'
        l_1_loop = missing
        for l_1_a, l_1_loop in LoopContext(environment.call(context, environment.ticking, (undefined(name='axes') if l_0_axes is missing else l_0_axes)), undefined):
            _loop_vars = {}
            pass
            yield '**Axis '
            yield str(t_4(environment.getattr(l_1_a, 'name')))
            yield '**'
            if environment.getattr(l_1_a, 'doc'):
                pass
                yield ' ('
                yield str(t_14(environment.getattr(l_1_a, 'doc')))
                yield ')'
            yield ': '
            yield str(t_6(context.eval_ctx, t_9(context, t_9(context, environment.getattr(l_1_a, 'members'), attribute='name'), 'code'), ', '))
            yield '.\n'
            if (t_7(environment.getattr(l_1_a, 'members')) <= environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'columns_per_table')):
                pass
                yield '\n| input | '
                yield str(t_6(context.eval_ctx, t_9(context, t_9(context, environment.getattr(l_1_a, 'members'), attribute='name'), 'code'), ' | '))
                yield ' | unit |\n|---|'
                for l_2_m in environment.call(context, environment.ticking, environment.getattr(l_1_a, 'members'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '---:|'
                l_2_m = missing
                yield '---|\n'
                for l_2_r in environment.call(context, environment.ticking, environment.getattr(l_1_a, 'rows'), _loop_vars=_loop_vars):
                    _loop_vars = {}
                    pass
                    yield '| '
                    yield str(t_4(environment.getattr(l_2_r, 'name')))
                    yield ' | '
                    for l_3_c in environment.call(context, environment.ticking, environment.getattr(l_2_r, 'cells'), _loop_vars=_loop_vars):
                        _loop_vars = {}
                        pass
                        if t_15(l_3_c):
                            pass
                            yield '(unchanged)'
                        elif environment.getattr(l_3_c, 'literal'):
                            pass
                            yield str(t_3(environment.getattr(l_3_c, 'figure')))
                        else:
                            pass
                            yield str(t_3(environment.getattr(l_3_c, 'figure')))
                            yield ' = '
                            yield str(t_3(t_4(environment.getattr(l_3_c, 'written'))))
                        yield ' | '
                    l_3_c = missing
                    yield str(t_3(environment.getattr(l_2_r, 'unit')))
                    yield ' |\n'
                l_2_r = missing
            else:
                pass
                yield '\n'
                l_2_loop = missing
                for l_2_m, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_a, 'members'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    yield '- '
                    yield str(t_4(environment.getattr(l_2_m, 'name')))
                    if environment.getattr(l_2_m, 'doc'):
                        pass
                        yield ': '
                        yield str(t_14(environment.getattr(l_2_m, 'doc')))
                    yield ' ('
                    l_3_loop = missing
                    for l_3_o, l_3_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_2_m, 'overrides'), _loop_vars=_loop_vars), undefined):
                        _loop_vars = {}
                        pass
                        yield str(t_4(environment.concat((environment.getattr(l_3_o, 'name'), ' = ', environment.getattr(l_3_o, 'written'), ))))
                        yield str((', ' if (not environment.getattr(l_3_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 278 in 'report.md.j2' evaluated to false and no else section was defined.")))
                    l_3_loop = l_3_o = missing
                    yield ')\n'
                l_2_loop = l_2_m = missing
            yield '\n'
        l_1_loop = l_1_a = missing
        if environment.getattr((undefined(name='layout') if l_0_layout is missing else l_0_layout), 'axis_columns'):
            pass
            yield 'The '
            yield str(t_7((undefined(name='scenarios') if l_0_scenarios is missing else l_0_scenarios)))
            yield ' scenarios are every combination of '
            yield str(t_6(context.eval_ctx, t_9(context, t_9(context, (undefined(name='axes') if l_0_axes is missing else l_0_axes), attribute='name'), 'code'), ' × '))
            yield '.\n'
        else:
            pass
            def t_24(fiter):
                for l_1_s in fiter:
                    if ((environment.getattr(l_1_s, 'name') != 'base') and (not environment.getattr(l_1_s, 'members'))):
                        yield l_1_s
            l_1_loop = missing
            for l_1_s, l_1_loop in LoopContext(t_24(environment.call(context, environment.ticking, (undefined(name='scenarios') if l_0_scenarios is missing else l_0_scenarios))), undefined):
                _loop_vars = {}
                pass
                yield '- '
                yield str(t_4(environment.getattr(l_1_s, 'name')))
                if environment.getattr(l_1_s, 'doc'):
                    pass
                    yield ': '
                    yield str(t_14(environment.getattr(l_1_s, 'doc')))
                if environment.getattr(l_1_s, 'overrides'):
                    pass
                    yield ' ('
                    l_2_loop = missing
                    for l_2_o, l_2_loop in LoopContext(environment.call(context, environment.ticking, environment.getattr(l_1_s, 'overrides'), _loop_vars=_loop_vars), undefined):
                        _loop_vars = {}
                        pass
                        yield str(t_4(environment.concat((environment.getattr(l_2_o, 'name'), ' = ', environment.getattr(l_2_o, 'written'), ))))
                        yield str((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 287 in 'report.md.j2' evaluated to false and no else section was defined.")))
                    l_2_loop = l_2_o = missing
                    yield ')'
                yield '\n'
            l_1_loop = l_1_s = missing
    if ((undefined(name='assumptions') if l_0_assumptions is missing else l_0_assumptions) or (undefined(name='sources') if l_0_sources is missing else l_0_sources)):
        pass
        yield '\n## Assumptions and sources\n\n'
        for l_1_a in environment.call(context, environment.ticking, (undefined(name='assumptions') if l_0_assumptions is missing else l_0_assumptions)):
            _loop_vars = {}
            pass
            yield '- '
            yield str(t_4(environment.getattr(l_1_a, 'name')))
            if (environment.getattr(l_1_a, 'kind') == 'input'):
                pass
                yield ' = '
                yield str(environment.getattr(l_1_a, 'value'))
            if environment.getattr(l_1_a, 'doc'):
                pass
                yield ': '
                yield str(t_14(environment.getattr(l_1_a, 'doc')))
            if environment.getattr(l_1_a, 'detail'):
                pass
                yield ' (assumption: '
                yield str(t_14(environment.getattr(l_1_a, 'detail')))
                yield ')'
            else:
                pass
                yield ' (assumption)'
            if environment.getattr(l_1_a, 'source'):
                pass
                yield '; source: '
                yield str(t_14(environment.getattr(l_1_a, 'source')))
            yield '\n'
        l_1_a = missing
        def t_25(fiter):
            for l_1_s in fiter:
                if (environment.getattr(l_1_s, 'name') not in t_9(context, (undefined(name='assumptions') if l_0_assumptions is missing else l_0_assumptions), attribute='name')):
                    yield l_1_s
        for l_1_s in t_25(environment.call(context, environment.ticking, (undefined(name='sources') if l_0_sources is missing else l_0_sources))):
            _loop_vars = {}
            pass
            yield '- '
            yield str(t_4(environment.getattr(l_1_s, 'name')))
            if (environment.getattr(l_1_s, 'kind') == 'input'):
                pass
                yield ' = '
                yield str(environment.getattr(l_1_s, 'value'))
            if environment.getattr(l_1_s, 'doc'):
                pass
                yield ': '
                yield str(t_14(environment.getattr(l_1_s, 'doc')))
            yield '; source: '
            yield str(t_14(environment.getattr(l_1_s, 'source')))
            yield '\n'
        l_1_s = missing
    yield '\n\n## Inputs\n\n'
    if (undefined(name='has_scenarios') if l_0_has_scenarios is missing else l_0_has_scenarios):
        pass
        yield 'Values for the plan as written; inputs marked * are set by scenarios (see [Scenarios](#scenarios)). Constraints are under [Definitions](#definitions).\n'
    else:
        pass
        yield 'Constraints are under [Definitions](#definitions).\n'
    yield '\n'
    yield str(environment.call(context, (undefined(name='fold') if l_0_fold is missing else l_0_fold), t_7((undefined(name='inputs') if l_0_inputs is missing else l_0_inputs)), environment.concat((t_7((undefined(name='inputs') if l_0_inputs is missing else l_0_inputs)), ' inputs', ))))
    yield '\n\n| | value |\n|---|---:|\n'
    for l_1_q in environment.call(context, environment.ticking, (undefined(name='inputs') if l_0_inputs is missing else l_0_inputs)):
        _loop_vars = {}
        pass
        yield '| '
        yield str(environment.call(context, (undefined(name='label') if l_0_label is missing else l_0_label), l_1_q, _loop_vars=_loop_vars))
        if environment.getattr(l_1_q, 'overridden'):
            pass
            yield ' \\*'
        yield ' | '
        yield str(t_3(environment.getattr(l_1_q, 'figure')))
        yield ' |\n'
    l_1_q = missing
    yield '\n'
    yield str(environment.call(context, (undefined(name='unfold') if l_0_unfold is missing else l_0_unfold), t_7((undefined(name='inputs') if l_0_inputs is missing else l_0_inputs))))
    yield '\n\n## Checks\n\n'
    if environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'total'):
        pass
        yield '**'
        yield str(environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'sentence'))
        yield '**\n\n<details'
        if environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'failed'):
            pass
            yield ' open'
        yield '><summary>'
        yield str(environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'total'))
        yield ' check'
        yield str(('s' if (environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'total') != 1) else cond_expr_undefined("the inline if-expression on line 329 in 'report.md.j2' evaluated to false and no else section was defined.")))
        if environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'failed'):
            pass
            yield ', '
            yield str(environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'failed'))
            yield ' failing'
        yield '</summary>\n\n| | check | expected | actual |\n|---|---|---:|---:|\n'
        for l_1_c in environment.call(context, environment.ticking, environment.getattr((undefined(name='checks') if l_0_checks is missing else l_0_checks), 'results')):
            _loop_vars = {}
            pass
            yield '| '
            yield str(('pass' if environment.getattr(l_1_c, 'passed') else '**FAIL**'))
            yield ' | '
            yield str(t_3(t_4(environment.getattr(l_1_c, 'condition'))))
            if (environment.getattr(l_1_c, 'scenario') or environment.getattr(l_1_c, 'with')):
                pass
                yield '<br>'
                if environment.getattr(l_1_c, 'scenario'):
                    pass
                    yield 'in '
                    yield str(t_4(environment.getattr(l_1_c, 'scenario')))
                if environment.getattr(l_1_c, 'with_items'):
                    pass
                    yield str(('<br>' if environment.getattr(l_1_c, 'scenario') else cond_expr_undefined("the inline if-expression on line 334 in 'report.md.j2' evaluated to false and no else section was defined.")))
                    yield 'with '
                    yield str(t_6(context.eval_ctx, t_9(context, t_9(context, environment.getattr(l_1_c, 'with_items'), 'code'), 'cell'), ',<br>'))
            if environment.getattr(l_1_c, 'error'):
                pass
                yield '<br>'
                yield str(t_3(t_14(environment.getattr(l_1_c, 'error'))))
            yield ' | '
            yield str(t_3(environment.getattr(l_1_c, 'expected')))
            if environment.getattr(l_1_c, 'tolerance'):
                pass
                yield '<br>'
                yield str(t_3(environment.getattr(l_1_c, 'tolerance')))
            yield ' | '
            yield str(t_3(environment.getattr(l_1_c, 'actual')))
            yield ' |\n'
        l_1_c = missing
        yield '\n</details>\n'
    else:
        pass
        yield 'The plan has no `check` statements.\n'
    yield '\n## Definitions\n\n'
    l_0_defs = environment.call_binop(context, '+', (undefined(name='inputs') if l_0_inputs is missing else l_0_inputs), (undefined(name='derived') if l_0_derived is missing else l_0_derived))
    context.vars['defs'] = l_0_defs
    context.exported_vars.add('defs')
    yield str(environment.call(context, (undefined(name='fold') if l_0_fold is missing else l_0_fold), environment.call_binop(context, '+', t_7((undefined(name='defs') if l_0_defs is missing else l_0_defs)), t_7((undefined(name='functions') if l_0_functions is missing else l_0_functions))), environment.concat((t_7((undefined(name='defs') if l_0_defs is missing else l_0_defs)), ' definitions', (environment.concat((' and ', t_7((undefined(name='functions') if l_0_functions is missing else l_0_functions)), ' function', ('s' if (t_7((undefined(name='functions') if l_0_functions is missing else l_0_functions)) != 1) else cond_expr_undefined("the inline if-expression on line 345 in 'report.md.j2' evaluated to false and no else section was defined.")), )) if (undefined(name='functions') if l_0_functions is missing else l_0_functions) else ''), ))))
    yield '\n\n'
    for l_1_q in environment.call(context, environment.ticking, (undefined(name='defs') if l_0_defs is missing else l_0_defs)):
        _loop_vars = {}
        pass
        yield '- **'
        yield str(t_14(environment.getattr(l_1_q, 'label')))
        yield '** '
        yield str(t_4(environment.getattr(l_1_q, 'name')))
        if environment.getattr(l_1_q, 'unit'):
            pass
            yield ' ('
            yield str(environment.getattr(l_1_q, 'unit'))
            yield ')'
        if environment.getattr(l_1_q, 'tags'):
            pass
            yield ' *['
            yield str(t_14(t_6(context.eval_ctx, environment.getattr(l_1_q, 'tags'), ', ')))
            yield ']*'
        yield '.\n'
        if (environment.getattr(l_1_q, 'kind') == 'input'):
            pass
            yield '  Input: '
            yield str(environment.getattr(l_1_q, 'value'))
            if environment.getattr(l_1_q, 'constraints'):
                pass
                yield ', where '
                yield str(t_6(context.eval_ctx, t_9(context, environment.getattr(l_1_q, 'constraints'), 'code'), ', '))
            if environment.getattr(l_1_q, 'overridden'):
                pass
                yield '; set by scenarios'
            yield '.\n'
        elif environment.getattr(l_1_q, 'display_math'):
            pass
            yield '\n  ```math\n  '
            yield str(environment.getattr(l_1_q, 'equation_latex'))
            yield '\n  ```\n\n  As written: '
            yield str(t_4(environment.getattr(l_1_q, 'formula')))
            yield '\n'
        else:
            pass
            yield '  '
            yield str(t_10(environment.getattr(l_1_q, 'equation_latex')))
            yield ', written '
            yield str(t_4(environment.getattr(l_1_q, 'formula')))
            yield '\n'
    l_1_q = missing
    if (undefined(name='functions') if l_0_functions is missing else l_0_functions):
        pass
        yield "\nFunctions the formulas call, each written once (a formula above shows the call, not the function's formula):\n\n"
        for l_1_f in environment.call(context, environment.ticking, (undefined(name='functions') if l_0_functions is missing else l_0_functions)):
            _loop_vars = {}
            pass
            yield '- **'
            yield str(t_14(environment.getattr(l_1_f, 'label')))
            yield '** '
            yield str(t_4(environment.getattr(l_1_f, 'name')))
            if environment.getattr(l_1_f, 'unit'):
                pass
                yield ' ('
                yield str(environment.getattr(l_1_f, 'unit'))
                yield ')'
            yield '.\n'
            if environment.getattr(l_1_f, 'display_math'):
                pass
                yield '\n  ```math\n  '
                yield str(environment.getattr(l_1_f, 'equation_latex'))
                yield '\n  ```\n\n'
            else:
                pass
                yield '  '
                yield str(t_10(environment.getattr(l_1_f, 'equation_latex')))
                yield '\n'
        l_1_f = missing
    yield '\n'
    yield str(environment.call(context, (undefined(name='unfold') if l_0_unfold is missing else l_0_unfold), environment.call_binop(context, '+', t_7((undefined(name='defs') if l_0_defs is missing else l_0_defs)), t_7((undefined(name='functions') if l_0_functions is missing else l_0_functions)))))
    yield '\n\n## Dependency graph\n\nArrows point from a quantity to the quantities that use it'
    if environment.getattr((undefined(name='graph') if l_0_graph is missing else l_0_graph), 'override_edges'):
        pass
        yield '; dotted arrows from a value to the input a scenario sets with it'
    yield '. Inputs are blue, headline quantities yellow.\n'
    if environment.getattr((undefined(name='graph') if l_0_graph is missing else l_0_graph), 'summary'):
        pass
        yield '\n'
        yield str(environment.getattr((undefined(name='graph') if l_0_graph is missing else l_0_graph), 'note'))
        yield '\n'
    yield '\n```mermaid\n'
    yield str(environment.getattr((undefined(name='graph') if l_0_graph is missing else l_0_graph), 'mermaid'))
    yield '\n```\n'

blocks = {}
debug_info = '7=128&8=133&10=152&11=155&13=172&14=177&16=198&18=206&20=211&21=232&22=245&23=249&24=252&28=271&29=279&31=307&32=314&34=324&35=329&37=338&39=340&42=344&44=348&46=351&48=354&49=358&53=369&54=372&56=375&57=377&58=381&60=392&61=395&62=397&64=403&65=407&69=419&72=421&74=424&75=428&79=432&81=461&84=464&86=468&91=472&92=475&93=478&96=481&98=484&100=492&102=494&103=496&105=502&106=506&110=523&111=525&112=527&113=530&114=533&117=536&119=538&123=541&127=543&128=547&131=553&137=558&141=560&142=564&145=570&147=573&148=582&151=586&153=590&154=595&156=599&157=602&160=605&162=620&164=630&165=634&168=643&170=646&173=651&175=654&178=659&180=662&182=664&184=668&187=671&189=679&190=681&192=685&194=687&195=690&198=697&202=699&203=702&206=704&210=707&211=710&214=712&215=715&216=718&218=732&219=735&221=742&222=744&223=747&225=749&226=753&229=759&230=766&231=770&237=776&242=779&244=782&247=786&248=790&249=793&251=822&255=825&256=829&260=835&262=845&266=849&267=853&268=863&270=866&271=868&272=874&273=878&277=903&278=907&283=924&284=927&286=933&287=942&292=960&296=963&297=967&300=990&301=998&308=1012&314=1019&318=1021&319=1025&322=1034&326=1036&327=1039&329=1041&333=1054&334=1058&344=1092&345=1095&347=1097&348=1101&349=1115&350=1118&351=1127&354=1130&357=1132&359=1137&362=1142&366=1145&367=1149&368=1158&371=1161&375=1166&380=1170&384=1172&385=1176&387=1179&391=1182'