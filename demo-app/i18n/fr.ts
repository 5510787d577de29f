/** The demo's own texts in French. */
import type { DemoTexts } from './texts.ts';

export const fr: DemoTexts = {
  lang: 'fr',
  brandTagline: 'vérification par SMS hébergée',
  footer:
    'Un intégrateur de référence pour le kit de vérification par SMS hébergée. Données de démonstration uniquement.',
  nav: {
    label: 'Principal',
    home: 'Accueil',
    activity: 'Activité',
    verifications: 'Vérifications',
    security: 'Sécurité',
    operator: 'Opérateur',
  },
  signedInAs: 'Connecté en tant que',
  signOut: 'Se déconnecter',
  backHome: 'Retour à l’accueil',
  signin: {
    title: 'Connexion',
    heading: 'Connexion à la démo',
    lead:
      'Choisissez un utilisateur de démonstration. Chacun a un numéro de téléphone enregistré ; le code SMS est ' +
      'envoyé à ce numéro (lisez-le dans la boîte de réception de l’émulateur).',
    button: 'Se connecter',
    buttonLabel: (name) => `Se connecter en tant que ${name}`,
    pickUser: 'Choisissez l’un des utilisateurs de démonstration.',
    note:
      'La connexion est volontairement sans mot de passe : la démo porte sur ce qui se passe après la connexion, ' +
      'quand une action demande une nouvelle vérification par SMS.',
  },
  security: {
    title: 'Sécurité',
    lead:
      'Cette page affiche vos codes de secours : elle vous demande de confirmer que c’est bien vous (un code reçu ' +
      'par SMS, ou votre clé d’accès), au plus toutes les 10 minutes.',
    codes: 'Codes de secours',
    codesNote: 'Chaque code vous connecte une fois si vous perdez votre téléphone. Gardez-les en lieu sûr.',
    replace: 'Remplacer les codes de secours',
    replaceHint:
      'Les anciens codes cessent de fonctionner. Vous confirmez à nouveau que c’est bien vous avant que les nouveaux soient créés.',
    replaced: 'De nouveaux codes de secours ont été créés. Les anciens ne fonctionnent plus.',
    seeLabel: 'voir vos codes de secours',
    replaceLabel: 'remplacer vos codes de secours',
    changePhoneLabel: 'changer votre numéro de téléphone',
  },
  home: {
    title: 'Accueil',
    welcome: (first) => `Bon retour, ${first}`,
    lead:
      'Les deux actions ci-dessous sont confirmées sur la page du service de vérification : par un code à usage ' +
      'unique envoyé par SMS à votre téléphone, ou par votre clé d’accès.',
    phone: 'Numéro de téléphone',
    verified: '✓ Vérifié',
    notVerified: 'Non vérifié',
    confirmedAt: (when) => `Confirmé le ${when}.`,
    confirmHint: 'Confirmez que vous recevez les SMS à ce numéro.',
    confirm: 'Confirmer votre numéro de téléphone',
    confirmAgain: 'Le confirmer à nouveau',
    payout: 'Compte de versement',
    sensitive: 'Sensible',
    none: 'Aucun pour l’instant',
    addHint: 'Ajoutez le compte qui reçoit vos versements.',
    changedAt: (when) => `Modifié le ${when}.`,
    newAccount: 'Nouveau numéro de compte',
    accountHint:
      'De 8 à 17 chiffres. Appliqué seulement après confirmation que c’est bien vous (un code reçu par SMS, ou votre clé d’accès).',
    accountExample: 'par ex. 0123 4567 8901',
    changePayout: 'Changer de compte de versement',
    newPhone: 'Nouveau numéro de téléphone',
    phoneHint: 'Un numéro français tel que vous l’écrivez, ou tout numéro commençant par + et l’indicatif du pays.',
    phoneExample: 'par ex. 06 12 34 56 78',
    changePhone: 'Changer de numéro de téléphone',
    codesGoTo: 'Les codes sont envoyés au',
    activityNote:
      'Avec l’émulateur fourni, lisez-les dans sa boîte de réception. Vos vérifications terminées sont listées sous',
  },
  activity: {
    title: 'Activité',
    lead:
      'Chaque action ci-dessous a été exécutée une seule fois, dans la même transaction de base de données qui a ' +
      'marqué sa session de vérification comme traitée.',
    empty: 'Rien pour l’instant. Confirmez votre numéro ou changez de compte de versement depuis l’',
    emptyLink: 'Accueil',
    caption: 'Actions exécutées, les plus récentes d’abord',
    when: 'Date',
    action: 'Action',
    details: 'Détails',
    session: 'Session de vérification',
    emailsTitle: 'E-mails envoyés',
    emailsLead:
      'Envoyés après chaque résultat par le hook onOutcome du kit, hors de la transaction ' +
      '(au moins une fois ; un par résultat).',
    noEmails: 'Aucun e-mail pour l’instant.',
  },
  actionLabels: {
    confirm_phone: 'Numéro de téléphone confirmé',
    change_payout: 'Compte de versement changé',
    change_phone: 'Numéro de téléphone changé',
    see_security: 'Identité confirmée pour voir les codes de secours',
    new_recovery_codes: 'Codes de secours remplacés',
    phone_change: 'Identité confirmée pour changer de numéro',
  },
  verifications: {
    title: 'Vérifications',
    lead:
      'Toutes les vérifications que vous avez lancées, les plus récentes d’abord, telles que le kit les conserve : ' +
      'le numéro est masqué, et les détails d’une vérification terminée sont supprimés après 30 jours. ' +
      'Ce que chacune a changé figure dans Activité.',
    empty: 'Aucune vérification pour l’instant.',
    started: 'Lancée',
    action: 'Action',
    outcome: 'Résultat',
    settledBy: 'Conclue par',
    number: 'Numéro',
    removed: 'supprimé',
    outcomes: {
      pending: 'En attente du code',
      fulfilled: 'Vérifiée',
      failed: 'Non vérifiée',
      expired: 'Expirée',
      superseded: 'Remplacée par une demande plus récente',
    },
    sources: {
      landing: 'votre retour sur le site',
      mobile: 'l’application mobile',
      sweep: 'la vérification en arrière-plan',
    },
    justNow: 'à l’instant',
    minutesAgo: (n) => `il y a ${n} min`,
    hoursAgo: (n) => `il y a ${n} h`,
    daysAgo: (n) => `il y a ${n} jours`,
  },
  verified: {
    phoneTitle: 'Numéro de téléphone confirmé',
    phoneText: (phone) => `Vous avez confirmé que le ${phone} est le vôtre.`,
    phoneNotConfirmedTitle: 'Numéro de téléphone non confirmé',
    phoneNotConfirmedText: (phone) => `Votre numéro ${phone} n’est pas encore confirmé.`,
    phoneLanded: {
      first: 'Téléphone confirmé : cette vérification vient de l’appliquer.',
      replay: 'Téléphone confirmé : cette vérification avait déjà été appliquée, rien n’a été exécuté deux fois.',
      notCurrent: 'Rien n’a été confirmé : cette vérification portait sur un numéro qui n’est plus le vôtre.',
    },
    payoutTitle: 'Compte de versement changé',
    payoutText: (last4) => `Les versements vont désormais sur le compte se terminant par ${last4}.`,
    payoutUpdated: 'Votre compte de versement a été mis à jour.',
    change: 'Changement',
    when: 'Date',
    session: 'Session',
    viewActivity: 'Voir l’activité',
  },
  errors: {
    signinRefused: {
      title: 'Connexion refusée',
      message:
        'Le formulaire de connexion a expiré ou venait d’un autre site. Ouvrez la page de connexion et réessayez.',
    },
    signoutRefused: {
      title: 'Déconnexion refusée',
      message: 'Le formulaire a expiré ; revenez en arrière et réessayez.',
    },
    notFound: { title: 'Page introuvable', message: 'Il n’y a rien à cette adresse.' },
    badRequest: { title: 'Cette requête n’a pas pu être lue', message: 'Revenez en arrière et réessayez.' },
    operatorOnly: {
      title: 'Réservé aux opérateurs',
      message:
        'Cette page est réservée aux opérateurs de la démo (DEMO_OPERATORS ; par défaut Alice Moreau). Rien n’a été ' +
        'montré ni modifié.',
    },
    server: { title: 'Une erreur s’est produite', message: 'Rien n’a été modifié. Réessayez dans un instant.' },
  },
  kit: {
    processedTitle: 'Vérification traitée',
    processedText:
      'Si vous avez lancé cette vérification, connectez-vous au compte depuis lequel vous l’avez lancée pour voir le ' +
      'résultat.',
    goToSignIn: 'Aller à la connexion',
    errorTitle: 'Problème de vérification',
    clientErrorHeading: 'Cela n’a pas fonctionné',
    serverErrorHeading: 'Une erreur s’est produite',
  },
  operator: {
    title: 'Opérateur',
    lead:
      'Le pompage de SMS, tel que le kit le compte : les SMS envoyés et vérifiés par pays, les règles qui se ' +
      'déclenchent maintenant et les décisions qu’elles ont prises. Seuls les opérateurs de la démo (DEMO_OPERATORS ; ' +
      'par défaut Alice Moreau) peuvent ouvrir cette page ou utiliser son formulaire : les autres reçoivent une erreur ' +
      '403. Une vraie application la réserve à son équipe, par un rôle qui lui est propre.',
    off:
      'Les règles anti-pompage de SMS du kit sont désactivées dans cette démo (pumping.mode « off ») : rien n’est ' +
      'compté, il n’y a donc rien à afficher.',
    chartTitle: 'SMS par pays',
    chartLead: (days) => `SMS envoyés et vérifiés par pays, pour chacun des ${days} derniers jours.`,
    chartTop: (shown) =>
      `Le graphique montre les ${shown} pays qui ont reçu le plus de SMS ; le tableau les liste tous.`,
    legendUnverified: 'Envoyés, jamais vérifiés',
    legendVerified: 'Vérifiés',
    chartOldest: (days) => `il y a ${days} jours`,
    chartNewest: 'dernières 24 h',
    tableCaption: (days) => `SMS envoyés et vérifiés par pays et par jour, ${days} derniers jours`,
    country: 'Pays',
    day: 'Jour',
    sent: 'Envoyés',
    verified: 'Vérifiés',
    unverified: 'Jamais vérifiés',
    dayLabel: (daysAgo) =>
      daysAgo === 0 ? 'Dernières 24 heures' : daysAgo === 1 ? 'Il y a 24 à 48 heures' : `Il y a ${daysAgo} jours`,
    noTexts: (days) => `Aucun SMS ces ${days} derniers jours.`,
    trippedTitle: 'Règles déclenchées',
    trippedLead:
      'Les pays, blocs de numéros et adresses dont le prochain SMS enfreindrait une règle (ou qu’un opérateur a ' +
      'bloqués), avec leurs SMS non vérifiés à côté des seuils.',
    trippedCaption: 'Clés dont les règles se déclenchent maintenant',
    noneTripped: 'Aucune règle ne se déclenche.',
    kind: 'Type',
    key: 'Clé',
    reasons: 'Règles',
    lastHour: 'Dernière heure',
    lastDay: 'Dernières 24 heures',
    countOf: (count, threshold) => `${count} sur ${threshold}`,
    operatorRule: 'Règle d’opérateur',
    none: 'aucune',
    kinds: {
      country: 'Pays',
      block: 'Bloc de numéros',
      address: 'Adresse',
      user: 'Utilisateur',
      address_country: 'Adresse et pays',
    },
    rules: { allow: 'Libéré', block: 'Bloqué' },
    decisionsTitle: 'Décisions récentes',
    decisionsLead:
      'Les demandes qui ont déclenché une règle ces dernières 24 heures, les plus récentes d’abord. Un numéro ' +
      'apparaît par son bloc : ses trois derniers chiffres ne sont jamais affichés.',
    decisionsCaption: 'Décisions des dernières 24 heures, les plus récentes d’abord',
    noDecisions: 'Aucune décision ces dernières 24 heures.',
    when: 'Date',
    decision: 'Décision',
    numberBlock: 'Numéro',
    address: 'Adresse',
    user: 'Utilisateur',
    decisions: { warned: 'Envoyé, avec un avertissement', refused: 'Refusé', challenged: 'Envoyé après le test' },
    rulesTitle: 'Règles des opérateurs',
    rulesCaption: 'Blocages et libérations en vigueur',
    noRules: 'Aucun blocage ni aucune libération en vigueur.',
    until: 'Jusqu’au',
    actTitle: 'Bloquer ou libérer',
    actLead:
      'Un blocage refuse toute demande vers son pays ou son bloc de numéros pendant 12 heures ; une libération ' +
      'les envoie quels que soient les comptes pendant 24 heures.',
    actLegend: 'Action',
    acts: {
      block: 'Bloquer 12 heures',
      release: 'Libérer 24 heures',
      clear: 'Retirer le blocage ou la libération',
    },
    target: 'Pays ou bloc de numéros',
    targetHint:
      'Un code de pays comme NG, ou un bloc de numéros : le numéro sans ses trois derniers chiffres, comme +33612345.',
    submit: 'Appliquer',
    done: { block: 'Bloqué pour 12 heures.', release: 'Libéré pour 24 heures.' },
    cleared: (found) =>
      found ? 'Le blocage ou la libération a été retiré.' : 'Il n’y avait ni blocage ni libération.',
    invalidTarget: 'Saisissez un code de pays comme NG, ou un bloc de numéros comme +33612345.',
    invalidAct: 'Choisissez bloquer, libérer ou retirer.',
  },
  account: {
    missing: 'Saisissez le nouveau numéro de compte.',
    tooLong: 'Le numéro de compte est trop long : utilisez de 8 à 17 chiffres.',
    digits: 'Le numéro de compte doit comporter de 8 à 17 chiffres (espaces et tirets acceptés).',
    same: 'C’est déjà votre compte de versement.',
  },
};
